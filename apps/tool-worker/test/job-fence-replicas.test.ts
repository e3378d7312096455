import { randomUUID } from 'node:crypto';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisJobFence } from '../src/execution/redis-job-fence.ts';
import { RedisReplicaWait } from '../src/execution/replica-wait.ts';
import type { Logger } from '../src/runtime/logger.ts';

const quiet = { info: () => undefined, warn: () => undefined } as unknown as Logger;

/**
 * The fence's replica wait against the machine's Redis, which has no replicas: a WAIT for one times
 * out, so the marker must be taken back and the call reported unreplicated; `auto` waits for none.
 */
describe('job fence with a replica wait', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `sy-test-fence-wait-${randomUUID().slice(0, 8)}`;
  const queue = new Queue('tools.{fence}', { connection: redis, prefix });
  const worker = new Worker('tools.{fence}', null, { connection: redis, prefix, lockDuration: 5_000 });
  const keys = {
    jobKey: (id: string) => queue.toKey(id),
    active: queue.toKey('active'),
    stalled: queue.toKey('stalled'),
  };
  const token = 'token-a';
  const marker = { dispatchedBy: 'worker-a', dispatchedAt: 1 };
  let job: Job;

  beforeAll(async () => {
    expect(await redis.info('replication')).toMatch(/connected_slaves:0/);
    await queue.add('call', { n: 1 }, { jobId: 'one' });
    job = (await worker.getNextJob(token)) as Job;
  });

  afterAll(async () => {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  });

  it('does not send a call whose marker no replica confirmed, and takes the marker back', async () => {
    const wait = new RedisReplicaWait(redis, { replicas: 1, timeoutMs: 200 }, 5_000, 60_000, quiet);
    const fence = new RedisJobFence(redis, keys, 5_000, wait);
    const startedAt = Date.now();
    expect(await fence.beforeSend(job, token, marker)).toEqual({
      unreplicated: { acked: 0, required: 1, timeoutMs: 200 },
    });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(190);
    expect(await redis.hget(queue.toKey('one'), 'progress')).toBe('{}');
    // Idempotent calls (no marker) never wait.
    expect(await fence.beforeSend(job, token, undefined)).toBe('fenced');
  });

  it('waits for nobody on auto when the primary has no replicas', async () => {
    const wait = new RedisReplicaWait(redis, { replicas: 'auto', timeoutMs: 200 }, 5_000, 60_000, quiet);
    const fence = new RedisJobFence(redis, keys, 5_000, wait);
    expect(await wait.required(undefined)).toBe(0);
    expect(await fence.beforeSend(job, token, marker)).toBe('fenced');
    expect(JSON.parse((await redis.hget(queue.toKey('one'), 'progress')) as string)).toEqual(marker);
  });
});
