import { redisKeys, type ToolCallJob, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';

/**
 * A job BullMQ fails for good with attempts left (stalled more than maxStalledCount: its stalled check
 * marks the job with a deferred failure, and the next worker to take it fails it unrecoverably) must be
 * announced on the outcomes stream like any final failure; it used to be found only by the reconcile.
 */
describe('a call failed for good with attempts left', () => {
  let fleet: Fleet;
  let queue: Queue;

  beforeAll(async () => {
    fleet = new Fleet('final-failure', () => ({
      search: exampleServer('search', { retry: { attempts: 3, backoffMs: 10 } }),
    }));
    await fleet.startWorker({ servers: ['search'] });
    queue = new Queue(toolQueueName('search'), { connection: fleet.redis, prefix: fleet.prefix });
  }, 180_000);

  afterAll(async () => {
    await queue?.close();
    await fleet?.close();
  });

  it('is announced on the outcomes stream', { timeout: 60_000 }, async () => {
    const id = toolCallJobId('final-failure', 'c1');
    const data: ToolCallJob = {
      jobId: 'final-failure',
      toolCallId: 'c1',
      server: 'search',
      tool: 'search',
      arguments: { query: 'never sent' },
      deadline: Date.now() + 3_600_000,
      enqueuedAt: Date.now(),
      idempotent: true,
      trace: {},
      labels: {},
    };
    // Delayed, so the stalled check's mark can be put on it before any worker takes it.
    const job = await queue.add('call', data, { jobId: id, attempts: 3, delay: 3_600_000 });
    // What BullMQ's moveStalledJobsToWait writes on a job stalled more than maxStalledCount times.
    await fleet.redis.hset(queue.toKey(id), 'defa', 'job stalled more than allowable limit');
    const stream = redisKeys.outcomes(fleet.prefix);
    const reader = fleet.redis.duplicate();
    try {
      await job.promote();
      let notice: Record<string, string> | undefined;
      let lastId = '0-0';
      while (!notice) {
        // Blocks until the worker announces something; the test timeout bounds the wait.
        const reply = (await reader.xread('BLOCK', 0, 'STREAMS', stream, lastId)) as Array<
          [string, Array<[string, string[]]>]
        > | null;
        for (const [, entries] of reply ?? []) {
          for (const [entryId, fields] of entries) {
            lastId = entryId;
            const entry = Object.fromEntries(
              fields.flatMap((_, index) => (index % 2 === 0 ? [[fields[index], fields[index + 1]]] : [])),
            ) as Record<string, string>;
            if (entry.id === id) notice = entry;
          }
        }
      }
      expect(notice).toMatchObject({
        queue: toolQueueName('search'),
        failedReason: 'job stalled more than allowable limit',
      });
      const failed = await queue.getJob(id);
      expect(await failed?.getState()).toBe('failed');
      // Attempts were left: the old "attemptsMade >= attempts" rule stayed silent here.
      expect(failed?.attemptsMade).toBeLessThan(3);
    } finally {
      reader.disconnect();
    }
  });
});
