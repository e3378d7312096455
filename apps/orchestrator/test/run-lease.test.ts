/**
 * A run's lease when the queue store does not answer its lock extension (docs/semantics.md §4, §19): a blip
 * is carried through while the last extension this replica saw succeed still covers now; past it the run
 * may be another replica's (the store may be out of reach of this replica only: a full pool, a cut link),
 * so the lease is given up rather than an outcome written twice.
 */
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { BullRunLease } from '../src/agent/runs/run-lease.ts';
import { LeaseLostError } from '../src/tool-calls/call-lease.ts';

/** A BullMQ job whose lock extension answers as the test says: 1 (extended), 0 (not ours), or throws. */
function jobAnswering(answers: Array<number | Error>): Job {
  return {
    id: 'run-1',
    extendLock: async () => {
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer ?? 1;
    },
  } as unknown as Job;
}

const unreachable = () => new Error('timeout exceeded when trying to connect');

describe('BullRunLease', () => {
  it('carries an unanswered extension through while the last confirmed one covers now', async () => {
    const errors: unknown[] = [];
    const lease = new BullRunLease(jobAnswering([1, unreachable()]), 'token', 60_000, undefined, (error) =>
      errors.push(error),
    );
    await lease.confirm();
    await expect(lease.confirm()).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(lease.signal.aborted).toBe(false);
  });

  it('gives the run up when an extension goes unanswered past the last confirmed one', async () => {
    const lease = new BullRunLease(jobAnswering([unreachable()]), 'token', 60_000, undefined);
    // Nothing confirmed yet: the lock BullMQ took may have run out already.
    await expect(lease.confirm()).rejects.toBeInstanceOf(LeaseLostError);
    expect(lease.signal.aborted).toBe(true);
  });

  it('gives the run up once the lock duration since the last confirmation has passed', async () => {
    const lease = new BullRunLease(jobAnswering([1, unreachable()]), 'token', 30, undefined);
    await lease.confirm();
    const confirmedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, confirmedAt + 40 - Date.now())));
    await expect(lease.confirm()).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('asks the store before an outcome only when the last confirmation no longer covers now', async () => {
    let asked = 0;
    const job = {
      id: 'run-1',
      extendLock: async () => {
        asked += 1;
        return 1;
      },
    } as unknown as Job;
    const lease = new BullRunLease(job, 'token', 60_000, undefined);
    await lease.confirmUnlessFresh();
    await lease.confirmUnlessFresh();
    expect(asked).toBe(1);
    const short = new BullRunLease(job, 'token', 1, undefined);
    await short.confirm();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await short.confirmUnlessFresh();
    expect(asked).toBe(3);
  });

  it('is lost when the store says the lock is not ours and it cannot be taken back', async () => {
    const lease = new BullRunLease(
      jobAnswering([0]),
      'token',
      60_000,
      undefined,
      undefined,
      async () => false,
    );
    await expect(lease.confirm()).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('records late outcomes of a run it ended itself without asking the store (its lock is gone)', async () => {
    // A run ended by its deadline: the queue job is finished, so an extension answers 0; the cancelled
    // call's outcome that arrives afterwards is still this replica's to record.
    const lease = new BullRunLease(jobAnswering([0]), 'token', 1, undefined, undefined, async () => false);
    lease.ended();
    await expect(lease.confirmUnlessFresh()).resolves.toBeUndefined();
    expect(lease.signal.aborted).toBe(false);
    // Without the end the same answer is a lost run.
    const notEnded = new BullRunLease(jobAnswering([0]), 'token', 1, undefined, undefined, async () => false);
    await expect(notEnded.confirmUnlessFresh()).rejects.toBeInstanceOf(LeaseLostError);
  });
});
