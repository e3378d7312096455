import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

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

/**
 * Keeps (or takes back) the lock of a job this worker is running, so a result it holds is recorded.
 * A lock that merely expired (Redis or this worker paused past the lock duration) is re-taken only if
 * nobody took the job since: it is still in the active list (the stalled check moves it out) and its
 * start count is the one this worker saw (every new start increments it). Returns 1 held, 0 lost.
 */
const HOLD_LOCK = `
local holder = redis.call('GET', KEYS[2])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('SREM', KEYS[4], ARGV[3])
  return 1
end
if holder then return 0 end
if redis.call('HGET', KEYS[1], 'ats') ~= ARGV[4] then return 0 end
if not redis.call('LPOS', KEYS[3], ARGV[3]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('SREM', KEYS[4], ARGV[3])
return 1
`;

/** Clears the marker of a call that turned out not to be sent, only while the lock is still ours. */
const UNMARK = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', '{}')
return 1
`;

type FencedRedis = Redis & {
  switchyardUnmark(jobKey: string, lockKey: string, token: string): Promise<number>;
  switchyardFenceSend(
    jobKey: string,
    lockKey: string,
    token: string,
    ms: number,
    marker: string,
  ): Promise<number>;
  switchyardHoldLock(
    jobKey: string,
    lockKey: string,
    active: string,
    stalled: string,
    token: string,
    ms: number,
    jobId: string,
    attemptsStarted: string,
  ): Promise<number>;
};

export type FenceResult = 'fenced' | 'lock_lost' | 'already_sent';

/** Where the queue keeps a job and its lists (BullMQ's key layout, from the queue's own keys). */
export interface QueueKeys {
  jobKey(id: string): string;
  active: string;
  stalled: string;
}

export class JobFence {
  private readonly redis: FencedRedis;

  constructor(
    redis: Redis,
    private readonly keys: QueueKeys,
    private readonly lockDurationMs: number,
  ) {
    // defineCommand: EVALSHA with a fallback to EVAL, one round trip per call.
    if (!('switchyardFenceSend' in redis)) {
      redis.defineCommand('switchyardFenceSend', { numberOfKeys: 2, lua: FENCE_SEND });
      redis.defineCommand('switchyardHoldLock', { numberOfKeys: 4, lua: HOLD_LOCK });
      redis.defineCommand('switchyardUnmark', { numberOfKeys: 2, lua: UNMARK });
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

  /** One round trip: true when the job is still this worker's (its lock kept or re-taken). */
  async hold(job: Job, token: string): Promise<boolean> {
    const id = String(job.id);
    const key = this.keys.jobKey(id);
    const result = await this.redis.switchyardHoldLock(
      key,
      `${key}:lock`,
      this.keys.active,
      this.keys.stalled,
      token,
      this.lockDurationMs,
      id,
      String(job.attemptsStarted),
    );
    return result === 1;
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
