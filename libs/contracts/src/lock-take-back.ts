import type { RedisConnection } from './redis-connection.ts';

/**
 * Keeps (or takes back) the BullMQ lock of a job this process is running. A lock that merely expired
 * (Redis or this process paused past the lock duration) is re-taken only if nobody took the job since:
 * it is still in the active list (the stalled check moves it out) and its start count is the one this
 * process saw (every new start increments it). Returns 1 held, 0 lost.
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

/** The job a process runs, as BullMQ handed it over: its id, start count and lock token. */
export interface HeldJob {
  id: string;
  attemptsStarted: number;
  token: string;
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
