import type { Store } from '@switchyard/contracts';
import { PostgresRequestRegistry } from './postgres-request-registry.ts';
import { RedisRequestRegistry } from './redis-request-registry.ts';

/**
 * JSON-RPC request id → job of a tools/call in flight, per team, kept next to the queues. On 2025-11-25 a
 * client cancels with a separate `notifications/cancelled` POST naming only the request id, which any
 * replica may receive; stateless serving has no session to scope the id, so the team does, and an id two
 * of the team's clients use at once is left alone rather than cancelling the wrong call. What an entry
 * is, how long it lives and how ids are told apart: request-entry.ts.
 *
 * An abstract class rather than an interface so that it is also the injection token.
 */
export abstract class RequestRegistry {
  /** Records the call; an id the team already uses for another live call becomes ambiguous. */
  abstract register(team: string, requestId: string | number, jobId: string): Promise<void>;
  /** Forgets the call, unless the id has meanwhile become ambiguous or names another job. */
  abstract release(team: string, requestId: string | number, jobId: string): Promise<void>;
  /** The job of the team's call with this request id; undefined when there is none or it is ambiguous. */
  abstract jobOf(team: string, requestId: string | number): Promise<string | undefined>;
}

/** The registry on the deployment's store. */
export function requestRegistry(store: Store): RequestRegistry {
  return store.kind === 'redis'
    ? new RedisRequestRegistry(store.redis, store.prefix)
    : new PostgresRequestRegistry(store.pool);
}
