import { attemptRecord, buildOutcome, ToolCallOutcomeSchema } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';

const CALL = { jobId: 'j', toolCallId: 'c', server: 'flaky', tool: 'flaky', enqueuedAt: 1_000 };

/** docs/semantics.md §5: the attempt log and what queuedMs and runMs measure once a call was retried. */
describe('attemptLog', () => {
  it('lists every attempt oldest first, the queue wait before the first and the run of the last', () => {
    const first = attemptRecord(
      1,
      { workerId: 'w1', pickedUpAt: 1_100, sentAt: 1_110, error: 'timed out: per-attempt timeout 300 ms' },
      1_410,
    );
    const outcome = buildOutcome(
      CALL,
      {
        status: 'ok',
        attempts: 2,
        workerId: 'w2',
        attempt: 2,
        earlierAttempts: [first],
        pickedUpAt: 1_600,
        sentAt: 1_605,
      },
      1_700,
    );
    expect(outcome.attemptLog).toEqual([
      {
        attempt: 1,
        workerId: 'w1',
        pickedUpAt: 1_100,
        startedAt: 1_110,
        finishedAt: 1_410,
        error: 'timed out: per-attempt timeout 300 ms',
      },
      { attempt: 2, workerId: 'w2', pickedUpAt: 1_600, startedAt: 1_605, finishedAt: 1_700 },
    ]);
    // Not 600 (the second pick-up): the backoff and the first attempt are in the log, not the queue wait.
    expect(outcome.queuedMs).toBe(100);
    expect(outcome.runMs).toBe(95);
    expect(ToolCallOutcomeSchema.parse(outcome).attemptLog).toHaveLength(2);
  });

  it('records an attempt that was never sent without startedAt', () => {
    const outcome = buildOutcome(
      CALL,
      { status: 'invalid_arguments', workerId: 'w1', attempt: 1, pickedUpAt: 1_050 },
      1_060,
    );
    expect(outcome.attemptLog).toEqual([
      { attempt: 1, workerId: 'w1', pickedUpAt: 1_050, finishedAt: 1_060 },
    ]);
  });

  it('has no log for an outcome decided without a worker', () => {
    expect(buildOutcome(CALL, { status: 'unavailable' }, 1_500).attemptLog).toBeUndefined();
  });
});
