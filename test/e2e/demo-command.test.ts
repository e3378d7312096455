/**
 * `npm run demo` (scripts/demo.ts, on the compiled apps) leaves nothing behind in the stores it was
 * given: its job schema and its queues (the Redis keys of its prefix, or on the postgres pass its queue
 * schema) are gone when it exits 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, TEST_BACKEND } from '../support/backend.ts';
import { REPO_ROOT, RUN_MODE, tsxArgs } from '../support/paths.ts';
import { TestProcess } from '../support/processes.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

describe.skipIf(RUN_MODE !== 'compiled')('npm run demo (compiled apps)', () => {
  // A Redis of its own: other people's demos on the shared one use the same key prefix.
  const redis = new DedicatedRedis({ persistent: false });
  let demo: TestProcess;
  let code: number | null;

  beforeAll(async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_BACKEND: TEST_BACKEND, DATABASE_URL };
    // Its own Redis alone: not the cluster (or Sentinel group) another pass points the suites at.
    delete env.REDIS_URL;
    delete env.REDIS_CLUSTER_NODES;
    delete env.REDIS_SENTINELS;
    delete env.SWITCHYARD_DEMO_KEY;
    if (TEST_BACKEND === 'redis') {
      await redis.start();
      env.REDIS_URL = redis.url;
    }
    // `npm run demo` is `npm run build && node … scripts/demo.ts`; the compiled run has built already.
    const child = spawn(process.execPath, tsxArgs(join(REPO_ROOT, 'scripts/demo.ts')), {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    demo = new TestProcess('npm run demo', child);
    code = await demo.exited;
  }, 240_000);

  afterAll(async () => {
    await demo?.stop();
    if (TEST_BACKEND === 'redis') await redis.stop();
  });

  it('exits 0 and drops its schemas and queues', async () => {
    expect(code, `${demo.lines.join('\n')}\n${demo.stderr.join('')}`).toBe(0);
    // "Schemas:    switchyard_demo_… (jobs)[, …_queues (queues)]"
    const schemasLine = demo.lines.find((line) => line.startsWith('Schemas:')) ?? '';
    const schemas = [...schemasLine.matchAll(/(\w+) \((?:jobs|queues)\)/g)].map((match) => String(match[1]));
    expect(schemas.length, schemasLine).toBe(TEST_BACKEND === 'postgres' ? 2 : 1);
    const database = new pg.Client({ connectionString: DATABASE_URL });
    await database.connect();
    try {
      const left = await database.query(
        'SELECT schema_name FROM information_schema.schemata WHERE schema_name = ANY($1)',
        [schemas],
      );
      expect(left.rows).toEqual([]);
    } finally {
      await database.end();
    }
    if (TEST_BACKEND !== 'redis') return;
    const client = new Redis(redis.url);
    try {
      // It did use this Redis (every write counts while nothing is saved), and kept none of it.
      const persistence = await client.info('persistence');
      expect(Number(/rdb_changes_since_last_save:(\d+)/.exec(persistence)?.[1])).toBeGreaterThan(0);
      const [, keys] = await client.scan('0', 'MATCH', 'switchyard-demo*', 'COUNT', 10_000);
      expect(keys).toEqual([]);
      expect(await client.dbsize()).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});
