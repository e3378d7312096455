/** The fence's answer on either backend: 1 fenced (send), 2 a marker exists (do not send), else not our lock. */
export function fenceResult(reply: number): 'fenced' | 'lock_lost' | 'already_sent' {
  if (reply === 1) return 'fenced';
  return reply === 2 ? 'already_sent' : 'lock_lost';
}

/**
 * Whether the lock may have expired since `since` (a local time at or before the lock was last set):
 * the clock keeps running while a process is frozen, so a stall shows up here. Half the lock duration
 * leaves room for clock skew between this process and the store's judgement of the expiry.
 */
export function lockMayHaveExpired(since: number | undefined, lockDurationMs: number): boolean {
  return since === undefined || Date.now() - since >= lockDurationMs / 2;
}

/** The job field holding the records of a retried call's earlier attempts (a JSON array). */
export const ATTEMPTS_FIELD = 'switchyardAttempts';
