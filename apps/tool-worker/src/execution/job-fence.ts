import {
  type AttemptRecord,
  AttemptRecordSchema,
  holdJobLock,
  type QueueKeys,
  type RedisConnection,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { z } from 'zod';

/**
 * Sends a call only while this worker still holds the job's BullMQ lock (its token), atomically with
 * the at-most-once marker. A worker that was frozen (GC pause, SIGSTOP, a starved VM) past its lock
 * still has its pre-freeze copy of the job; BullMQ may have handed the job to another worker meanwhile.
 * The job hash and its lock share the queue's {hash tag}, so one script sees both.
 *
 * Returns 1 (fenced: send), 0 (the lock is not ours: do not send), 2 (a marker exists: the call was
 * already sent by someone, do not send again). ARGV[3] empty = check the lock only (idempotent calls).
 * The lock is extended on success, so its expiry is at least a lock duration after this ran.
 */
const FENCE_SEND = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[3] ~= '' then
  local progress = redis.call('HGET', KEYS[1], 'progress')
  if progress then
    local ok, decoded = pcall(cjson.decode, progress)
    if ok and type(decoded) == 'table' and decoded['dispatchedBy'] then return 2 end
  end
  redis.call('HSET', KEYS[1], 'progress', ARGV[3])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`;

/** The job hash field holding the records of a retried call's earlier attempts (JSON array). */
const ATTEMPTS_FIELD = 'switchyardAttempts';

/** Clears the marker of a call that turned out not to be sent, only while the lock is still ours. */
const UNMARK = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', '{}')
return 1
`;

/**
 * Writes the marker with a task handle (docs/semantics.md §12), only while the lock is ours: a worker
 * that lost the job must not overwrite what its new owner recorded.
 */
const RECORD_TASK = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
`;

/**
 * Records the attempts of a call that is about to be retried (docs/semantics.md §5) in a field of the
 * job's own hash, only while the lock is ours: BullMQ's moveToFailed keeps the hash, and a worker that
 * lost the job must not write into its new owner's record.
 */
const RECORD_ATTEMPTS = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], '${ATTEMPTS_FIELD}', ARGV[2])
return 1
`;

type FencedRedis = RedisConnection & {
  switchyardRecordAttempts(jobKey: string, lockKey: string, token: string, attempts: string): Promise<number>;
  switchyardRecordTask(jobKey: string, lockKey: string, token: string, marker: string): Promise<number>;
  switchyardUnmark(jobKey: string, lockKey: string, token: string): Promise<number>;
  switchyardFenceSend(
    jobKey: string,
    lockKey: string,
    token: string,
    ms: number,
    marker: string,
  ): Promise<number>;
};

export type FenceResult = 'fenced' | 'lock_lost' | 'already_sent';

export class JobFence {
  private readonly redis: FencedRedis;

  constructor(
    redis: RedisConnection,
    private readonly keys: QueueKeys,
    private readonly lockDurationMs: number,
  ) {
    // defineCommand: EVALSHA with a fallback to EVAL, one round trip per call.
    if (!('switchyardFenceSend' in redis)) {
      redis.defineCommand('switchyardFenceSend', { numberOfKeys: 2, lua: FENCE_SEND });
      redis.defineCommand('switchyardUnmark', { numberOfKeys: 2, lua: UNMARK });
      redis.defineCommand('switchyardRecordTask', { numberOfKeys: 2, lua: RECORD_TASK });
      redis.defineCommand('switchyardRecordAttempts', { numberOfKeys: 2, lua: RECORD_ATTEMPTS });
    }
    this.redis = redis as FencedRedis;
  }

  /** One round trip: the lock is ours, and (with a marker) no marker existed and ours is now written. */
  async beforeSend(job: Job, token: string, marker: object | undefined): Promise<FenceResult> {
    const id = String(job.id);
    const key = this.keys.jobKey(id);
    const result = await this.redis.switchyardFenceSend(
      key,
      `${key}:lock`,
      token,
      this.lockDurationMs,
      marker ? JSON.stringify(marker) : '',
    );
    if (result === 1) return 'fenced';
    return result === 2 ? 'already_sent' : 'lock_lost';
  }

  /**
   * Takes back our marker when the call was not sent after all (the session went away between the
   * fence and the send), so the job may go back on the queue. A lock no longer ours leaves it alone: the
   * marker may be the new owner's.
   */
  async unmark(job: Job, token: string): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (await this.redis.switchyardUnmark(key, `${key}:lock`, token)) === 1;
  }

  /** Records a task handle in the job's marker; false when the lock is no longer ours. */
  async recordTask(job: Job, token: string, marker: object): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (await this.redis.switchyardRecordTask(key, `${key}:lock`, token, JSON.stringify(marker))) === 1;
  }

  /**
   * Writes the records of every attempt so far before a retry is asked for; false when the lock is no
   * longer ours (nothing written). One round trip, on the retry path only.
   */
  async recordAttempts(job: Job, token: string, attempts: AttemptRecord[]): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (
      (await this.redis.switchyardRecordAttempts(key, `${key}:lock`, token, JSON.stringify(attempts))) === 1
    );
  }

  /**
   * The records a previous attempt wrote (recordAttempts); [] when there are none or they are
   * unreadable (an outcome without them is still true). One round trip, for a retried call only.
   */
  async earlierAttempts(job: Job): Promise<AttemptRecord[]> {
    const raw = await this.redis.hget(this.keys.jobKey(String(job.id)), ATTEMPTS_FIELD);
    if (!raw) return [];
    try {
      return z.array(AttemptRecordSchema).catch([]).parse(JSON.parse(raw));
    } catch {
      return [];
    }
  }

  /** One round trip: true when the job is still this worker's (its lock kept or re-taken). */
  hold(job: Job, token: string): Promise<boolean> {
    return holdJobLock(
      this.redis,
      this.keys,
      { id: String(job.id), attemptsStarted: job.attemptsStarted, token },
      this.lockDurationMs,
    );
  }

  /**
   * Whether the lock may have expired since `since` (a local time at or before the lock was last set):
   * the clock keeps running while a process is frozen, so a stall shows up here. Half the lock duration
   * leaves room for clock skew between this process and Redis's own expiry.
   */
  mayHaveExpired(since: number | undefined): boolean {
    return since === undefined || Date.now() - since >= this.lockDurationMs / 2;
  }
}
