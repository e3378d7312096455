import {
  parseConfig,
  redisKeys,
  redisStore,
  type ToolCallJob,
  type ToolCallOutcome,
  toolQueueName,
} from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, dropPrefix, uniquePrefix } from '../support/redis.ts';
import { announceStandInWorker, okOutcome } from '../support/stand-in-worker.ts';

/**
 * A worker can die between completing a job and announcing it on the outcomes stream. The dispatcher's
 * reconcile round must then find the outcome in the job itself: delayed, never lost.
 */
describe('a lost outcome notification', () => {
  const prefix = uniquePrefix('lost');
  const redis = connect('switchyard-test-lost');
  const workerRedis = connect('switchyard-test-lost-worker');
  const dispatcherRedis = connect('switchyard-test-lost-dispatcher');
  let worker: Worker | undefined;
  let dispatcher: ToolCallDispatcher | undefined;

  afterAll(async () => {
    await worker?.close();
    await dispatcher?.close();
    await dropPrefix(redis, prefix);
    await Promise.all([redis.quit(), workerRedis.quit(), dispatcherRedis.quit()]);
  });

  it('is made up for by reading the completed job', async () => {
    // A deadline far away, so the deadline check cannot stand in for the reconcile round.
    const config = parseConfig({ servers: { quiet: { command: 'true', queueTimeoutMs: 3_600_000 } } });
    await announceStandInWorker(redis, prefix, 'quiet', 60_000);
    // A real BullMQ worker that completes calls with a proper outcome but never announces them.
    worker = new Worker<ToolCallJob, ToolCallOutcome>(
      toolQueueName('quiet'),
      async (job) => {
        // Still running when the dispatcher's first look finds it active: only a reconcile round can
        // notice it finished.
        await new Promise((resolve) => setTimeout(resolve, 500));
        return okOutcome(job, 'done quietly');
      },
      { connection: workerRedis, prefix },
    );
    dispatcher = new ToolCallDispatcher({
      config,
      prefix,
      store: redisStore(dispatcherRedis, prefix),
      catalog: new CatalogReader(redisStore(dispatcherRedis, prefix), 0),
      reconcileEveryMs: 300,
    });
    await dispatcher.start();

    const outcome = await dispatcher.dispatch({
      jobId: 'lost',
      toolCallId: 'c1',
      server: 'quiet',
      tool: 'anything',
      arguments: {},
    });
    expect(outcome).toMatchObject({ status: 'ok', text: 'done quietly', workerId: 'quiet-worker' });
    // Nothing was ever announced: the outcome came from the job itself.
    expect(await redis.xlen(redisKeys.outcomes(prefix))).toBe(0);
  });
});
