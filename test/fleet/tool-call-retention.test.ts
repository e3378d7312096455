import { type Store, type ToolCallJobInput, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { queueEventsOn, setCompletedAt } from '../support/queue-jobs.ts';

const KEEP_COMPLETED_SECONDS = 120;
const KEEP_FAILED_SECONDS = 300;

/**
 * `toolCalls.keepCompletedSeconds` really removes a finished tool-call job from the queue store, both when
 * the dispatcher's job options apply and when the worker's own do (a job added without them). BullMQ prunes
 * a queue's completed jobs by their finish time (Redis: the completed set's score; PostgreSQL: the job
 * row's finished_at_ms) when a later job of that queue finishes; the suite ages a finished job by moving
 * its finish time back instead of waiting minutes, then finishes another.
 */
describe('tool-call job retention', () => {
  let fleet: Fleet;
  let dispatcher: ToolCallDispatcher;
  let queue: Queue;
  let store: Store;
  let call = 0;
  const search = async (): Promise<string> => {
    const toolCallId = `call-${++call}`;
    const outcome = await dispatcher.dispatch({
      jobId: 'retention',
      toolCallId,
      server: 'search',
      tool: 'search',
      arguments: { query: `retention ${call}` },
    });
    expect(outcome.status).toBe('ok');
    return toolCallJobId('retention', toolCallId);
  };
  /** Moves a finished job's finish time back by `seconds`, as if that much time had passed. */
  const age = async (id: string, seconds: number): Promise<void> => {
    expect(await setCompletedAt(store, queue, id, Date.now() - seconds * 1000)).toBe(1);
  };
  const kept = async (id: string): Promise<boolean> => {
    // Redis: the job's hash, and its entry in the completed set (getJobState looks there first).
    const [job, state] = await Promise.all([queue.getJob(id), queue.getJobState(id)]);
    // Half-removed would be a bug of its own: the job and its place among the completed go together.
    expect(job !== undefined).toBe(state === 'completed');
    return job !== undefined;
  };

  beforeAll(async () => {
    fleet = new Fleet(
      'retention',
      (dir) => ({
        search: exampleServer('search', { env: { SEARCH_LEDGER: `${dir}/search.jsonl` }, trusted: true }),
      }),
      {},
      {
        orchestrator: { maxDeadlineMs: 120_000, defaultLimits: { deadlineMs: 60_000 } },
        toolCalls: { keepCompletedSeconds: KEEP_COMPLETED_SECONDS, keepFailedSeconds: KEEP_FAILED_SECONDS },
      },
    );
    await fleet.startWorker();
    dispatcher = await fleet.dispatcher();
    queue = dispatcher.queue('search');
    store = await fleet.suiteStore();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('the dispatcher adds every call with the configured retention', async () => {
    const id = await search();
    const job = await queue.getJob(id);
    expect(job?.opts).toMatchObject({
      removeOnComplete: { age: KEEP_COMPLETED_SECONDS },
      removeOnFail: { age: KEEP_FAILED_SECONDS },
    });
  });

  it('removes a completed call older than keepCompletedSeconds when a later call completes, and only it', async () => {
    const old = await search();
    const young = await search();
    await age(old, KEEP_COMPLETED_SECONDS + 5);
    await age(young, KEEP_COMPLETED_SECONDS - 30);
    expect(await kept(old)).toBe(true);

    // The outcome is announced only after the job moved to completed, and the prune is in that same step.
    const later = await search();
    expect(await kept(old)).toBe(false);
    expect(await kept(young)).toBe(true);
    expect(await kept(later)).toBe(true);
  });

  it("the worker's own setting applies to a call added without removal options", async () => {
    const old = await search();
    await age(old, KEEP_COMPLETED_SECONDS + 5);
    // As a producer that sets no removeOnComplete would add it: BullMQ then uses the finishing Worker's.
    const now = Date.now();
    const data: ToolCallJobInput = {
      jobId: 'retention',
      toolCallId: 'bare',
      server: 'search',
      tool: 'search',
      arguments: { query: 'bare' },
      deadline: now + 60_000,
      enqueuedAt: now,
      idempotent: true,
    };
    const events = queueEventsOn(store, toolQueueName('search'));
    try {
      await events.waitUntilReady();
      const bare = await queue.add('call', data, { jobId: toolCallJobId('retention', 'bare') });
      expect(bare.opts.removeOnComplete).toBeUndefined();
      await bare.waitUntilFinished(events, 60_000);
      expect(await kept(old)).toBe(false);
      expect(await kept(toolCallJobId('retention', 'bare'))).toBe(true);
    } finally {
      await events.close();
    }
  });
});
