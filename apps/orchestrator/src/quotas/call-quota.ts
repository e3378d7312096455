import type { Store } from '@switchyard/contracts';
import { PostgresCallQuota } from './postgres-call-quota.ts';
import { RedisCallQuota } from './redis-call-quota.ts';

/**
 * A team's tool calls per minute across the fleet (teams.<t>.callsPerMinute), as GCRA (the generic cell
 * rate algorithm, a token bucket kept as one timestamp, the team's "theoretical arrival time"). It never
 * refuses: each call reserves the next free slot and is told how long to wait for it; `perMinute` calls
 * pass at once, then one every minute / perMinute. The store's clock is the only clock, and a reservation
 * is atomic there, so replicas with skewed clocks draw on one budget.
 */
export interface CallQuota {
  /** Reserves a slot for one call of `team`; resolves with how many ms the call must wait for it. */
  reserve(team: string, perMinute: number): Promise<number>;
}

export const QUOTA_WINDOW_MS = 60_000;

export function callQuota(store: Store): CallQuota {
  return store.kind === 'redis'
    ? new RedisCallQuota(store.redis, store.prefix)
    : new PostgresCallQuota(store.pool);
}
