import type { RedisConnection } from './redis-connection.ts';
import type { Store } from './store/store.ts';

/**
 * Keeps (or takes back) the BullMQ lock of a job this process is running (docs/semantics.md §4). A lock
 * that merely expired (the store or this process paused past the lock duration) is re-taken only if
 * nobody took the job since. One round trip on either backend.
 */
export interface LockHold {
  /** True when the job is still this process's: its lock kept, or re-taken after it merely expired. */
  hold(job: HeldJob, lockDurationMs: number): Promise<boolean>;
}

/** The job a process runs, as BullMQ handed it over: its id, start count and lock token. */
export interface HeldJob {
  id: string;
  attemptsStarted: number;
  token: string;
}

/** A BullMQ Queue or Worker: its name (the PostgreSQL key) and its keys (Redis). */
export interface LockedQueue {
  readonly name: string;
  toKey(type: string): string;
}

/**
 * The hold on PostgreSQL (docs/postgres-backend.md §3): the token stays on the job's row after its lock
 * expired until BullMQ's stalled check moves the job (which clears it), so "merely expired, nobody took
 * it" is the same row condition as "held": no start count is needed. `now` is this process's clock, the
 * one BullMQ's PG backend stamps and judges locks with (§4). $1 queue, $2 id, $3 token, $4 ms, $5 now.
 */
const HOLD_LOCK_SQL = `
UPDATE job SET locked_until_ms = $5::bigint + $4::bigint, stalled_marked = false
 WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3`;

/**
 * The hold on Redis: the lock kept, or (merely expired) re-taken while the job is still in the active
 * list (the stalled check moves it out) and its start count is the one this process saw (every new
 * start increments it). Returns 1 held, 0 lost.
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

/** The lock hold of one queue's jobs on this store. */
export function lockHoldFor(store: Store, queue: LockedQueue): LockHold {
  if (store.kind === 'postgres') {
    const { pool } = store;
    return {
      async hold(job, lockDurationMs) {
        const { rowCount } = await pool.query(HOLD_LOCK_SQL, [
          queue.name,
          job.id,
          job.token,
          lockDurationMs,
          Date.now(),
        ]);
        return rowCount === 1;
      },
    };
  }
  const { redis } = store;
  const keys = queueKeysOf(queue);
  return { hold: (job, lockDurationMs) => holdJobLock(redis, keys, job, lockDurationMs) };
}

type HoldingRedis = RedisConnection & {
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

/** Where a queue keeps a job and its lists (BullMQ's key layout, from the queue's own keys). */
export interface QueueKeys {
  jobKey(id: string): string;
  active: string;
  stalled: string;
}

/** A Redis queue's keys, from the Queue or Worker that knows its prefix. */
export function queueKeysOf(queue: LockedQueue): QueueKeys {
  return { jobKey: (id) => queue.toKey(id), active: queue.toKey('active'), stalled: queue.toKey('stalled') };
}

/**
 * One round trip: true when the job is still this process's (its lock kept, or re-taken after it merely
 * expired). The job hash, its lock and the queue's lists share the queue's {hash tag}: one slot.
 */
export async function holdJobLock(
  redis: RedisConnection,
  keys: QueueKeys,
  job: HeldJob,
  lockDurationMs: number,
): Promise<boolean> {
  // defineCommand: EVALSHA with a fallback to EVAL.
  if (!('switchyardHoldLock' in redis)) {
    redis.defineCommand('switchyardHoldLock', { numberOfKeys: 4, lua: HOLD_LOCK });
  }
  const key = keys.jobKey(job.id);
  const result = await (redis as HoldingRedis).switchyardHoldLock(
    key,
    `${key}:lock`,
    keys.active,
    keys.stalled,
    job.token,
    lockDurationMs,
    job.id,
    String(job.attemptsStarted),
  );
  return result === 1;
}
