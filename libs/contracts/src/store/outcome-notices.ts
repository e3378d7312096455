import type { OutcomeNotice } from '../outcome-notice.ts';
import { PostgresOutcomeNotices } from './postgres/outcome-notices-postgres.ts';
import { RedisOutcomeNotices } from './redis/outcome-notices-redis.ts';
import type { Store } from './store.ts';

/** Stops a reader: no handler is called once it resolves, and its connection is closed. */
export type StopReading = () => Promise<void>;

/**
 * The deployment's outcome notices (docs/postgres-backend.md §2, "outcomes stream"): a worker announces
 * that a tool-call job settled, after BullMQ's move to completed/failed succeeded; every orchestrator
 * replica reads every notice and wakes the waiter it has for it. A notice lost on the way only delays
 * its outcome: waiters settle from the job itself in the reconcile rounds.
 */
export interface OutcomeNotices {
  announce(notice: OutcomeNotice): Promise<void>;
  /**
   * Hands every notice announced from now on to `handler`, in order, with one connection whatever the
   * number of servers; after a lost connection it resumes after the last notice it read. Resolves once
   * the starting point is fixed: a notice announced after that is seen even if reading starts later.
   */
  listen(handler: (notice: OutcomeNotice) => void, onError: (error: unknown) => void): Promise<StopReading>;
}

export function outcomeNotices(store: Store): OutcomeNotices {
  return store.kind === 'redis'
    ? new RedisOutcomeNotices(store.redis, store.prefix)
    : new PostgresOutcomeNotices(store);
}
