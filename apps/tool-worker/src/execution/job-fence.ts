import {
  type AttemptRecord,
  type LockedQueue,
  lockHoldFor,
  queueKeysOf,
  type Store,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { PostgresJobFence } from './postgres-job-fence.ts';
import { RedisJobFence } from './redis-job-fence.ts';
import type { ReplicaWait } from './replica-wait.ts';

/**
 * The marker was written but fewer replicas than required confirmed it within the wait (WAIT): after a
 * failover to one of them it could be gone and the call sent again, so it is not sent. The marker was
 * taken back (our lock still held); a lock lost meanwhile is `lock_lost` instead.
 */
export interface Unreplicated {
  unreplicated: { acked: number; required: number; timeoutMs: number };
}

export type FenceResult = 'fenced' | 'lock_lost' | 'already_sent' | Unreplicated;

/**
 * Sends a call only while this worker still holds the job's BullMQ lock (its token), atomically with
 * the at-most-once marker (docs/semantics.md §3). A worker that was frozen (GC pause, SIGSTOP, a starved
 * VM) past its lock still has its pre-freeze copy of the job; BullMQ may have handed the job to another
 * worker meanwhile. Every write here is made only under this worker's token: a worker that lost the job
 * must not touch what its new owner records. One round trip each.
 */
export interface JobFence {
  /**
   * The lock is ours and (with a marker) no marker existed and ours is now written — and, when replicas
   * are to be waited for, that many have it. No marker: checks the lock only (idempotent calls). The
   * lock is extended on success, so its expiry is at least a lock duration after this ran.
   */
  beforeSend(job: Job, token: string, marker: object | undefined): Promise<FenceResult>;
  /**
   * Takes back our marker when the call was not sent after all (the session went away between the
   * fence and the send), so the job may go back on the queue. A lock no longer ours leaves it alone: the
   * marker may be the new owner's.
   */
  unmark(job: Job, token: string): Promise<boolean>;
  /** Records a task handle in the job's marker (docs/semantics.md §12); false when the lock is not ours. */
  recordTask(job: Job, token: string, marker: object): Promise<boolean>;
  /**
   * Writes the records of every attempt so far before a retry is asked for (docs/semantics.md §5), where
   * BullMQ's move to failed keeps them; false when the lock is no longer ours (nothing written).
   */
  recordAttempts(job: Job, token: string, attempts: AttemptRecord[]): Promise<boolean>;
  /**
   * The records a previous attempt wrote (recordAttempts); [] when there are none or they are
   * unreadable (an outcome without them is still true). For a retried call only.
   */
  earlierAttempts(job: Job): Promise<AttemptRecord[]>;
  /** True when the job is still this worker's (its lock kept or re-taken after it merely expired). */
  hold(job: Job, token: string): Promise<boolean>;
  /** Whether the lock may have expired since `since` (a local time at or before it was last set). */
  mayHaveExpired(since: number | undefined): boolean;
}

/**
 * The fence of one queue's jobs on this store. `replicaWait` is Redis's WAIT; on PostgreSQL it is not
 * built (replica-wait.ts refuses a required count at start-up), so it is not passed on.
 */
export function jobFenceFor(
  store: Store,
  queue: LockedQueue,
  lockDurationMs: number,
  replicaWait?: ReplicaWait,
): JobFence {
  return store.kind === 'redis'
    ? new RedisJobFence(store.redis, queueKeysOf(queue), lockDurationMs, replicaWait)
    : new PostgresJobFence(store.pool, queue, lockDurationMs, lockHoldFor(store, queue));
}
