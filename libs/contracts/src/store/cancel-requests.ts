import type { ToolCallCancel } from '../tool-call.ts';
import { PostgresCancelRequests } from './postgres/cancel-requests-postgres.ts';
import { RedisCancelRequests } from './redis/cancel-requests-redis.ts';
import type { Store } from './store.ts';

/** Stops a subscription and closes its connection. */
export type Unsubscribe = () => Promise<void>;

/**
 * Tool-call cancel requests (docs/postgres-backend.md §2): an orchestrator asks every worker to abort or
 * refuse some calls of one queue; fire and forget, heard by the workers connected at the time (each keeps
 * an early cancel for a while, in-flight-calls.ts).
 */
export interface CancelRequests {
  publish(request: ToolCallCancel): Promise<void>;
  /**
   * Hands each message to `handler` as the JSON text of a ToolCallCancel, parsed by the receiver (which
   * reports malformed ones). On PostgreSQL one request may arrive as several messages, each naming some
   * of its calls.
   */
  subscribe(
    handler: (message: string) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe>;
}

export function cancelRequests(store: Store): CancelRequests {
  return store.kind === 'redis'
    ? new RedisCancelRequests(store.redis, store.prefix)
    : new PostgresCancelRequests(store);
}
