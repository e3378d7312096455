import { type LockedQueue, type Store, ToolCallJobSchema } from '@switchyard/contracts';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractQueues, contractBackends } from '../../../libs/contracts/test/contract-backends.ts';
import { jobFenceFor } from '../src/execution/job-fence.ts';

/** A job's lock merely expiring, behind the port's back: what a worker frozen past its lock finds. */
async function expireLock(store: Store, queue: LockedQueue, id: string): Promise<void> {
  if (store.kind === 'redis') await store.redis.del(`${queue.toKey(id)}:lock`);
  else
    await store.pool.query('UPDATE job SET locked_until_ms = 0 WHERE queue = $1 AND id = $2', [
      queue.name,
      id,
    ]);
}

/** A tool call's job data, as the dispatcher adds it (the attempt log must not break its parse). */
function callData() {
  const now = Date.now();
  return {
    jobId: 'job_fence',
    toolCallId: 'call-1',
    server: 'search',
    tool: 'find',
    arguments: { q: 'x' },
    deadline: now + 60_000,
    enqueuedAt: now,
    idempotent: false,
  };
}

const marker = { dispatchedBy: 'worker-a', dispatchedAt: 1 };

/**
 * The at-most-once fence (docs/semantics.md §3, docs/postgres-backend.md §3) on each backend, against
 * jobs BullMQ really locked (hand-driven workers: each job is fetched with a token the test chooses) and
 * BullMQ's own stalled check handing a job to another worker.
 */
describe.each(contractBackends)('JobFence on $name', (backend) => {
  let queues: ContractQueues;
  let store: Store;

  beforeAll(async () => {
    queues = await ContractQueues.open(backend, 'tools', 'fence');
    store = queues.store;
  });
  afterAll(() => queues?.close());

  async function progressOf(q: Queue, id: string): Promise<unknown> {
    return (await q.getJob(id))?.progress;
  }

  it('writes the marker once, and only under the job lock', async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('call', callData(), { jobId: 'once' });
    const job = await queues.take(w, 'token-a');
    const fence = jobFenceFor(store, q, 5_000);
    expect(await fence.beforeSend(job, 'token-b', marker)).toBe('lock_lost');
    expect(JSON.stringify(await progressOf(q, 'once'))).not.toContain('dispatchedBy');
    expect(await fence.beforeSend(job, 'token-a', marker)).toBe('fenced');
    expect(await progressOf(q, 'once')).toEqual(marker);
    // A stale copy of the job (no marker in it) still finds the marker in the store.
    expect(await fence.beforeSend(job, 'token-a', { ...marker, dispatchedAt: 2 })).toBe('already_sent');
    expect(await progressOf(q, 'once')).toEqual(marker);
    // Lock-only (an idempotent call): passes under our token, not under another.
    expect(await fence.beforeSend(job, 'token-a', undefined)).toBe('fenced');
    expect(await fence.beforeSend(job, 'token-b', undefined)).toBe('lock_lost');
  });

  it('fences off the old owner after a stalled hand-over; the new one finds its marker', async () => {
    const q = queues.queue();
    // A's lock is short and never renewed (a hand-driven worker renews nothing): it lapses, and B's
    // stalled check marks the job on one pass and moves it back to waiting on the next; B takes it.
    const a = queues.worker(q.name, { lockDuration: 500 });
    await q.add('call', callData(), { jobId: 'handed-over' });
    const jobA = await queues.take(a, 'token-a');
    const fenceA = jobFenceFor(store, q, 500);
    expect(await fenceA.beforeSend(jobA, 'token-a', marker)).toBe('fenced');

    const jobB = await queues.takeOverStalled(q.name, 'handed-over', 'token-b');
    expect(jobB.id).toBe('handed-over');
    // The marker crossed the hand-over in the job's progress: B's processor sees it when it picks the job up.
    expect(jobB.progress).toEqual(marker);

    // A's token no longer holds anything: no fence (with or without marker), no hold, no other write.
    expect(await fenceA.beforeSend(jobA, 'token-a', { ...marker, dispatchedAt: 2 })).toBe('lock_lost');
    expect(await fenceA.beforeSend(jobA, 'token-a', undefined)).toBe('lock_lost');
    expect(await fenceA.hold(jobA, 'token-a')).toBe(false);
    expect(await fenceA.unmark(jobA, 'token-a')).toBe(false);
    expect(await progressOf(q, 'handed-over')).toEqual(marker);
    // B's token holds the lock, and B, finding A's marker, must not send again (it reports indeterminate).
    const fenceB = jobFenceFor(store, q, 30_000);
    expect(await fenceB.beforeSend(jobB, 'token-b', undefined)).toBe('fenced');
    expect(await fenceB.beforeSend(jobB, 'token-b', { dispatchedBy: 'worker-b' })).toBe('already_sent');
    expect(await fenceB.hold(jobB, 'token-b')).toBe(true);
    // A wakes and finishes: BullMQ's move to completed checks the token and refuses it.
    await expect(jobA.moveToCompleted('A', 'token-a', false)).rejects.toThrow(/lock|not active|missing/i);
    expect(await q.getJobState('handed-over')).toBe('active');
  });

  it('takes the marker back and records a task handle only under the job lock', async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('call', callData(), { jobId: 'task' });
    const job = await queues.take(w, 'token-a');
    const fence = jobFenceFor(store, q, 5_000);
    expect(await fence.beforeSend(job, 'token-a', marker)).toBe('fenced');
    expect(await fence.unmark(job, 'token-b')).toBe(false);
    expect(await progressOf(q, 'task')).toEqual(marker);
    expect(await fence.unmark(job, 'token-a')).toBe(true);
    expect(await progressOf(q, 'task')).toEqual({});

    const withTask = { ...marker, task: { taskId: 't-1', createdAt: 3 } };
    expect(await fence.recordTask(job, 'token-b', withTask)).toBe(false);
    expect(await progressOf(q, 'task')).toEqual({});
    expect(await fence.recordTask(job, 'token-a', withTask)).toBe(true);
    expect(await progressOf(q, 'task')).toEqual(withTask);
    // The handle is inside the marker: the at-most-once fence still sees the call as sent.
    expect(await fence.beforeSend(job, 'token-a', marker)).toBe('already_sent');
  });

  it("keeps the attempt log across a retry's move, for the next attempt to read", async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('call', callData(), { jobId: 'retried', attempts: 2 });
    const first = await queues.take(w, 'token-a');
    const fence = jobFenceFor(store, q, 5_000);
    expect(await fence.earlierAttempts(first)).toEqual([]);
    const record = {
      attempt: 1,
      workerId: 'worker-a',
      pickedUpAt: 10,
      startedAt: 11,
      finishedAt: 12,
      error: 'x',
    };
    expect(await fence.recordAttempts(first, 'token-b', [record])).toBe(false);
    expect(await fence.earlierAttempts(first)).toEqual([]);
    expect(await fence.recordAttempts(first, 'token-a', [record])).toBe(true);

    // BullMQ's retry: the job goes back to wait with an attempt left, and a worker takes it again.
    await first.moveToFailed(new Error('unavailable: retry'), 'token-a', false);
    expect(await q.getJobState('retried')).toBe('waiting');
    const second = await queues.take(w, 'token-c');
    expect(second.attemptsMade).toBe(1);
    expect(await fence.earlierAttempts(second)).toEqual([record]);
    // What the worker parses of the job's data is still the call (the log is not part of it).
    const parsed = ToolCallJobSchema.safeParse(second.data);
    expect(parsed.success).toBe(true);
    expect(parsed.data).not.toHaveProperty('switchyardAttempts');
  });

  it('takes back a lock that merely expired, and fences under it again', async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('call', callData(), { jobId: 'lapsed' });
    const job = await queues.take(w, 'token-a');
    const fence = jobFenceFor(store, q, 5_000);
    await expireLock(store, q, 'lapsed');
    // (A different token is not asked here: Redis's expired lock no longer names its owner, so the
    // take-back goes by the start count, which only the process BullMQ handed this start knows.)
    expect(await fence.hold(job, 'token-a')).toBe(true);
    expect(await fence.beforeSend(job, 'token-a', marker)).toBe('fenced');
    expect(await progressOf(q, 'lapsed')).toEqual(marker);
  });

  it('judges a lock expiry on the local clock', () => {
    const fence = jobFenceFor(store, queues.queue(), 10_000);
    expect(fence.mayHaveExpired(undefined)).toBe(true);
    expect(fence.mayHaveExpired(Date.now())).toBe(false);
    expect(fence.mayHaveExpired(Date.now() - 5_000)).toBe(true);
  });
});
