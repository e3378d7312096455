import { writeFileSync } from 'node:fs';
import { catalogStoreOf, type WorkerHeartbeat } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilAnnounced } from '../support/announcements.ts';
import { postgresBackendEnv, TEST_BACKEND } from '../support/backend.ts';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { tsxArgs, WORKER_MAIN } from '../support/paths.ts';
import { descendants, isAlive } from '../support/processes.ts';
import { REDIS_URL, redisEnv } from '../support/redis.ts';

/**
 * The worker's life: it publishes its servers' tools and its session states to the queue store, follows
 * tools/list_changed, and on SIGTERM lets the call in flight finish, closes its sessions and leaves
 * no child process behind.
 */
describe('worker lifecycle and catalog', () => {
  let fleet: Fleet;

  beforeAll(() => {
    fleet = new Fleet('lifecycle', (dir) => ({
      crashy: exampleServer('crashy', { env: { SESSION_LEDGER: `${dir}/sessions.jsonl` } }),
      slow: exampleServer('slow', { idempotent: ['sleep'] }),
    }));
  });

  afterAll(async () => {
    await fleet?.close();
  });

  // Through the catalog port, as the orchestrators read it; read(0) forgets no heartbeat, lapsed or live.
  const catalog = async () => catalogStoreOf(await fleet.suiteStore()).read(0);
  const heartbeat = async (workerId: string): Promise<WorkerHeartbeat | undefined> =>
    (await catalog()).workers.find((beat) => beat.workerId === workerId);
  const catalogTools = async (server: string): Promise<string[]> =>
    (await catalog()).servers.find((entry) => entry.server === server)?.tools.map((tool) => tool.name) ?? [];
  /** What points a process at the deployment's queue store, as the fleet's own workers get it. */
  const storeEnv = () => (TEST_BACKEND === 'postgres' ? postgresBackendEnv() : redisEnv(REDIS_URL));

  it('publishes tools and ready sessions, and refreshes the catalog on tools/list_changed', async () => {
    const worker = await fleet.startWorker({ id: 'w-life' });
    expect(await catalogTools('crashy')).toEqual(expect.arrayContaining(['whoami', 'crash', 'echo', 'grow']));
    expect(await catalogTools('slow')).toEqual(expect.arrayContaining(['sleep', 'hang']));
    const beat = await heartbeat('w-life');
    expect(beat?.sessions.crashy).toMatchObject({ state: 'ready', connects: 1, pid: expect.any(Number) });
    expect(beat?.sessions.slow?.state).toBe('ready');
    expect(beat?.expiresAt).toBeGreaterThan(Date.now());

    const refreshed = worker.waitFor(
      (log) => log.msg === 'tools/list refreshed' && log.server === 'crashy',
      'a refresh',
    );
    const dispatcher = await fleet.dispatcher();
    const grown = await dispatcher.dispatch({
      jobId: 'life',
      toolCallId: 'grow',
      server: 'crashy',
      tool: 'grow',
      arguments: { name: 'shiny' },
    });
    expect(grown.status).toBe('ok');
    await refreshed;
    // The worker writes the new list after logging the refresh: wait for the write, woken by its announcement.
    await untilAnnounced(
      fleet.redis,
      fleet.prefix,
      async () => (await catalogTools('crashy')).includes('shiny'),
      "'shiny' in crashy's catalog entry",
    );
    // The new tool is callable right away, through the same warm session.
    const shiny = await dispatcher.dispatch({
      jobId: 'life',
      toolCallId: 'shiny',
      server: 'crashy',
      tool: 'shiny',
      arguments: { text: 'new tool works' },
    });
    expect(shiny).toMatchObject({ status: 'ok', text: 'new tool works' });
    // Each test starts its own worker, so none depends on another having run first.
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  it('refuses to start on a bad configuration, naming the key', async () => {
    const unknownServer = fleet.group.start('worker bad servers', tsxArgs(WORKER_MAIN), {
      ...storeEnv(),
      SWITCHYARD_CONFIG: fleet.configPath,
      SWITCHYARD_PREFIX: fleet.prefix,
      WORKER_SERVERS: 'crashy,nope',
    });
    expect(await unknownServer.exited).toBe(2);
    expect(unknownServer.stderr.join('')).toContain('WORKER_SERVERS: unknown server(s): nope');

    const badFile = fleet.path('bad.yaml');
    writeFileSync(badFile, 'servers:\n  docs:\n    transport: http\n    url: not-a-url\n');
    const badConfig = fleet.group.start('worker bad config', tsxArgs(WORKER_MAIN), {
      ...storeEnv(),
      SWITCHYARD_CONFIG: badFile,
      SWITCHYARD_PREFIX: fleet.prefix,
    });
    expect(await badConfig.exited).toBe(2);
    expect(badConfig.stderr.join('')).toContain('servers.docs.url: Invalid URL');
  });

  it('on SIGTERM finishes the call in flight, closes its sessions and leaves no child process', async () => {
    const worker = await fleet.startWorker({ id: 'w-stop' });
    // The MCP server children, as the worker itself reports them (tsx's esbuild helper is not one).
    const beat = await heartbeat('w-stop');
    const children = Object.values(beat?.sessions ?? {}).map((session) => session.pid as number);
    expect(children).toHaveLength(2);
    expect(children.every((pid) => descendants(worker.pid).includes(pid))).toBe(true);

    const dispatcher = await fleet.dispatcher();
    const inFlight = dispatcher.dispatch({
      jobId: 'life',
      toolCallId: 'slow-at-shutdown',
      server: 'slow',
      tool: 'sleep',
      arguments: { ms: 1_500 },
    });
    await worker.waitFor(
      (log) => log.msg === 'tool call sent' && log.server === 'slow',
      'the slow call to be sent',
    );
    worker.child.kill('SIGTERM');

    const outcome = await inFlight;
    expect(outcome).toMatchObject({ status: 'ok', workerId: 'w-stop' });
    expect(await worker.exited).toBe(0);
    expect(children.filter(isAlive)).toEqual([]);
    expect(await heartbeat('w-stop')).toBeUndefined();
  });
});
