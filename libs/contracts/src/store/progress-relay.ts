import type { RelayedCallMessage } from '../tool-call-progress.ts';
import type { Unsubscribe } from './cancel-requests.ts';
import { PostgresProgressRelay } from './postgres/progress-relay-postgres.ts';
import { RedisProgressRelay } from './redis/progress-relay-redis.ts';
import type { Store } from './store.ts';

/**
 * MCP progress (and, for calls whose /mcp client asked, log messages) of running tool calls, relayed
 * from the worker to the orchestrator replica whose client waits for it (docs/postgres-backend.md §2).
 * Best effort: heard by the subscribers connected at the time; a lost message is a progress bar that
 * skips a step, or a log line the client does not see.
 */
export interface ProgressRelayChannel {
  publish(message: RelayedCallMessage): Promise<void>;
  /** Hands every valid message to `handler`; others are dropped. */
  subscribe(
    handler: (message: RelayedCallMessage) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe>;
}

export function progressRelayChannel(store: Store): ProgressRelayChannel {
  return store.kind === 'redis'
    ? new RedisProgressRelay(store.redis, store.prefix)
    : new PostgresProgressRelay(store);
}
