import {
  type OutcomeNotice,
  outcomeNotices,
  type Store,
  type ToolCallJob,
  toolCallJobId,
  toolQueueName,
} from '@switchyard/contracts';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { markDeferredFailure, queueOn } from '../support/queue-jobs.ts';

/**
 * A job BullMQ fails for good with attempts left (stalled more than maxStalledCount: its stalled check
 * marks the job with a deferred failure, and the next worker to take it fails it unrecoverably) must be
 * announced on the outcomes stream (PostgreSQL: the outcome_notice table) like any final failure; it
 * used to be found only by the reconcile.
 */
describe('a call failed for good with attempts left', () => {
  let fleet: Fleet;
  let queue: Queue;
  let store: Store;

  beforeAll(async () => {
    fleet = new Fleet('final-failure', () => ({
      search: exampleServer('search', { retry: { attempts: 3, backoffMs: 10 } }),
    }));
    await fleet.startWorker({ servers: ['search'] });
    store = await fleet.suiteStore();
    queue = queueOn(store, toolQueueName('search'));
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
    await markDeferredFailure(store, queue, id, 'job stalled more than allowable limit');
    let announced: (notice: OutcomeNotice) => void = () => undefined;
    let readerFailed: (error: unknown) => void = () => undefined;
    const noticed = new Promise<OutcomeNotice>((resolve, reject) => {
      announced = resolve;
      readerFailed = reject;
    });
    // Listening before the promotion, so the worker's notice cannot come before the reader's start.
    const stopReading = await outcomeNotices(store).listen(
      (entry) => {
        if (entry.id === id) announced(entry);
      },
      (error) => readerFailed(error),
    );
    try {
      await job.promote();
      // The test timeout bounds the wait.
      const notice = await noticed;
      expect(notice).toMatchObject({
        queue: toolQueueName('search'),
        failedReason: 'job stalled more than allowable limit',
      });
      const failed = await queue.getJob(id);
      expect(await failed?.getState()).toBe('failed');
      // Attempts were left: the old "attemptsMade >= attempts" rule stayed silent here.
      expect(failed?.attemptsMade).toBeLessThan(3);
    } finally {
      await stopReading();
    }
  });
});
