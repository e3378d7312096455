import { parseConfig, redisKeys, redisStore, type WorkerHeartbeat } from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, dropPrefix, uniquePrefix } from '../support/redis.ts';

/**
 * The producer side must not hold a Redis connection per server: an orchestrator process talks to
 * every queue through one command connection and waits on all outcomes through one blocking reader.
 */
describe('dispatcher connections', () => {
  const admin = connect('switchyard-test-admin');
  const prefixes: string[] = [];

  afterAll(async () => {
    for (const prefix of prefixes) await dropPrefix(admin, prefix);
    await admin.quit();
  });

  async function connectionsWith(serverCount: number): Promise<number> {
    const prefix = uniquePrefix('conns');
    prefixes.push(prefix);
    const servers = Object.fromEntries(
      Array.from({ length: serverCount }, (_, index) => [
        `s${index}`,
        { command: 'true', queueTimeoutMs: 300 },
      ]),
    );
    const config = parseConfig({ servers });
    // A worker's heartbeat claiming every server ready, so each call is really enqueued on its queue.
    const beat: WorkerHeartbeat = {
      workerId: 'phantom',
      host: 'test',
      pid: 1,
      startedAt: Date.now(),
      beatAt: Date.now(),
      expiresAt: Date.now() + 60_000,
      sessions: Object.fromEntries(
        Object.keys(servers).map((name) => [name, { state: 'ready', since: 0, connects: 1 }]),
      ),
    };
    await admin.hset(redisKeys.workers(prefix), 'phantom', JSON.stringify(beat));

    const name = `switchyard-conn-probe-${prefix}`;
    const redis = connect(name);
    const dispatcher = new ToolCallDispatcher({
      config,
      prefix,
      store: redisStore(redis, prefix),
      catalog: new CatalogReader(redisStore(redis, prefix)),
    });
    await dispatcher.start();
    try {
      const outcomes = await Promise.all(
        Object.keys(servers).map((server) =>
          dispatcher.dispatch({
            jobId: 'conns',
            toolCallId: server,
            server,
            tool: 'anything',
            arguments: {},
          }),
        ),
      );
      // Nobody consumes these queues: every call sat in its queue and was dropped at its deadline.
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(serverCount).fill('expired'));
      const clients = (await admin.client('LIST')) as string;
      return clients.split('\n').filter((line) => line.includes(` name=${name} `)).length;
    } finally {
      await dispatcher.close();
      await redis.quit();
    }
  }

  it('holds the same two connections for 1 server and for 40', async () => {
    const one = await connectionsWith(1);
    const forty = await connectionsWith(40);
    expect(one).toBe(2);
    expect(forty).toBe(one);
  });
});
