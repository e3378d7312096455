import { randomUUID } from 'node:crypto';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisJobFence } from '../src/execution/redis-job-fence.ts';

/** The fence's Lua against real Redis and a job BullMQ really locked (a worker fetching by hand). */
describe('job fence', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `sy-test-fence-${randomUUID().slice(0, 8)}`;
  const queue = new Queue('tools.{fence}', { connection: redis, prefix });
  const worker = new Worker('tools.{fence}', null, { connection: redis, prefix, lockDuration: 5_000 });
  const fence = new RedisJobFence(
    redis,
    { jobKey: (id) => queue.toKey(id), active: queue.toKey('active'), stalled: queue.toKey('stalled') },
    5_000,
  );
  const token = 'token-a';
  let job: Job;
  const marker = { dispatchedBy: 'worker-a', dispatchedAt: 1 };

  beforeAll(async () => {
    await queue.add('call', { n: 1 }, { jobId: 'one' });
    job = (await worker.getNextJob(token)) as Job;
    expect(job.id).toBe('one');
  });

  afterAll(async () => {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  });

  const lockKey = () => `${queue.toKey('one')}:lock`;

  it('writes the marker once, and only under our lock', async () => {
    expect(await fence.beforeSend(job, 'token-b', marker)).toBe('lock_lost');
    expect(String(await redis.hget(queue.toKey('one'), 'progress'))).not.toContain('dispatchedBy');
    expect(await fence.beforeSend(job, token, marker)).toBe('fenced');
    expect(JSON.parse((await redis.hget(queue.toKey('one'), 'progress')) as string)).toEqual(marker);
    // A stale copy of the job (no marker in it) still finds the marker in Redis.
    expect(await fence.beforeSend(job, token, { ...marker, dispatchedAt: 2 })).toBe('already_sent');
    expect(await fence.beforeSend(job, token, undefined)).toBe('fenced');
  });

  it('takes an expired lock back only while nobody took the job since', async () => {
    expect(await fence.hold(job, token)).toBe(true);
    await redis.del(lockKey());
    expect(await fence.hold(job, token)).toBe(true);
    expect(await redis.get(lockKey())).toBe(token);
    expect(await fence.hold(job, 'token-b')).toBe(false);
    // Another start (the stalled check handed it out and someone took it) bumps the start count.
    await redis.del(lockKey());
    await redis.hincrby(queue.toKey('one'), 'ats', 1);
    expect(await fence.hold(job, token)).toBe(false);
    expect(await redis.get(lockKey())).toBeNull();
  });

  it('takes the marker back only under our lock', async () => {
    await redis.set(lockKey(), 'token-b');
    expect(await fence.unmark(job, token)).toBe(false);
    expect(await redis.hget(queue.toKey('one'), 'progress')).toContain('dispatchedBy');
    await redis.set(lockKey(), token);
    expect(await fence.unmark(job, token)).toBe(true);
    expect(await redis.hget(queue.toKey('one'), 'progress')).toBe('{}');
  });

  it('records a task handle only under our lock', async () => {
    const withTask = { ...marker, task: { taskId: 't-1', createdAt: 3 } };
    await redis.set(lockKey(), 'token-b');
    expect(await fence.recordTask(job, token, withTask)).toBe(false);
    expect(await redis.hget(queue.toKey('one'), 'progress')).toBe('{}');
    await redis.set(lockKey(), token);
    expect(await fence.recordTask(job, token, withTask)).toBe(true);
    expect(JSON.parse((await redis.hget(queue.toKey('one'), 'progress')) as string)).toEqual(withTask);
    // The handle is inside the marker: the at-most-once fence still sees the call as sent.
    expect(await fence.beforeSend(job, token, marker)).toBe('already_sent');
  });
});
