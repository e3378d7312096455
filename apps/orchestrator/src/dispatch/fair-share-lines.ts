import type { Clock, Store } from '@switchyard/contracts';
import { PostgresFairShareLines } from './postgres-fair-share-lines.ts';
import { RedisFairShareLines } from './redis-fair-share-lines.ts';

/**
 * Each team's line of calls not yet settled on one server (fair-share.ts turns a place into a BullMQ
 * priority). Joining is idempotent (a resumed run re-dispatching a call does not count twice), any
 * replica may make a call leave, and a call nobody settled drops out at its start deadline.
 */
export interface FairShareLines {
  /** Joins (or re-joins) the line and answers the call's place in it, 1 being the front. */
  enter(server: string, team: string, callId: string, deadline: number): Promise<number>;
  /** The call settled: it no longer holds its team back. */
  leave(server: string, team: string, callId: string): Promise<void>;
}

/**
 * The lines of this deployment's store. `clock` is the one the deadlines are stamped on; Redis judges
 * them on it, PostgreSQL on its own clock (the one the deadlines' clock measures on that backend).
 */
export function fairShareLines(store: Store, clock: Clock): FairShareLines {
  return store.kind === 'redis'
    ? new RedisFairShareLines(store.redis, store.prefix, clock)
    : new PostgresFairShareLines(store.pool);
}
