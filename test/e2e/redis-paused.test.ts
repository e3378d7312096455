import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilAnnounced } from '../support/announcements.ts';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const SETTINGS = { dependencyTimeoutMs: 1_000, retryAfterSeconds: 3 };
/** dependencyTimeoutMs plus a busy machine's slack; the old behaviour is to hang until Redis is back. */
const ANSWER_WITHIN_MS = 6_000;
const BATCH = { kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'paused' } }] };

/** Redis frozen (SIGSTOP: connections stay open, nothing answers), as in a VM pause or a long fork. */
describe('Redis paused', () => {
  const redis = new DedicatedRedis();
  let deployment: Deployment;
  let api: ApiClient;
  let pausedPid: number | undefined;

  beforeAll(async () => {
    await redis.start();
    deployment = new Deployment(
      'redis-paused',
      () => ({ search: exampleServer('search', { trusted: true }) }),
      {
        redisUrl: redis.url,
        orchestrator: SETTINGS,
      },
    );
    await deployment.startWorker();
    api = (await deployment.startOrchestrator('o-redis-paused')).api('alpha');
  });

  afterAll(async () => {
    if (pausedPid) process.kill(pausedPid, 'SIGCONT');
    await deployment?.close();
    await redis.stop();
  });

  /** One request with its own deadline, so a hanging answer fails the test instead of stalling it. */
  async function ask(method: string, path: string, body?: unknown, key = TEAM_KEYS.alpha) {
    const started = Date.now();
    const response = await fetch(`${api.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS + 4_000),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, ms: Date.now() - started };
  }

  /** The heartbeats lapsed while Redis was frozen: the tool is offered again after the next ones. */
  const availableAgain = () =>
    untilAnnounced(
      deployment.redis,
      deployment.prefix,
      async () => {
        const tools = await api.request('GET', '/v1/tools');
        return tools.body.tools?.some((tool: Json) => tool.name === 'search__search' && tool.available);
      },
      'search__search available again',
    );

  it('answers 503 with Retry-After within dependencyTimeoutMs, and serves again once Redis is back', async () => {
    const info = await deployment.redis.info('server');
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGSTOP');
    pausedPid = pid;
    try {
      for (const [method, path, body, key] of [
        ['POST', '/v1/jobs', BATCH, TEAM_KEYS.alpha],
        ['GET', '/v1/tools', undefined, TEAM_KEYS.alpha],
        ['GET', '/v1/servers', undefined, TEAM_KEYS.alpha],
        ['GET', '/v1/servers', undefined, TEAM_KEYS.operator],
        ['GET', '/health/ready', undefined, TEAM_KEYS.alpha],
      ] as const) {
        const answer = await ask(method, path, body, key);
        expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(503);
        expect(answer.headers.get('retry-after'), `${method} ${path}`).toBe('3');
        expect(answer.ms, `${method} ${path}`).toBeLessThan(ANSWER_WITHIN_MS);
        if (path === '/health/ready') expect(JSON.parse(answer.text).missing).toEqual(['redis']);
      }
    } finally {
      process.kill(pid, 'SIGCONT');
      pausedPid = undefined;
    }

    expect((await ask('GET', '/health/ready')).status).toBe(200);
    await availableAgain();
    const tools = await ask('GET', '/v1/tools');
    expect(tools.status).toBe(200);
    expect(tools.text).toContain('search__search');
    const submitted = await api.submit(BATCH);
    expect(submitted.status).toBe(201);
    const job = await api.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome, JSON.stringify(job.toolCalls[0].outcome)).toMatchObject({
      status: 'ok',
    });
  });
});
