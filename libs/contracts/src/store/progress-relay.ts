import type { ToolCallProgress } from '../tool-call-progress.ts';
import type { Unsubscribe } from './cancel-requests.ts';
import { PostgresProgressRelay } from './postgres/progress-relay-postgres.ts';
import { RedisProgressRelay } from './redis/progress-relay-redis.ts';
import type { Store } from './store.ts';

/**
 * MCP progress of running tool calls, relayed from the worker to the orchestrator replica whose /mcp
 * client waits for it (docs/postgres-backend.md §2). Best effort: heard by the subscribers connected at
 * the time; a lost message is a progress bar that skips a step.
 */
export interface ProgressRelayChannel {
  publish(progress: ToolCallProgress): Promise<void>;
  /** Hands every valid progress message to `handler`; others are dropped. */
  subscribe(
    handler: (progress: ToolCallProgress) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe>;
}

export function progressRelayChannel(store: Store): ProgressRelayChannel {
  return store.kind === 'redis'
    ? new RedisProgressRelay(store.redis, store.prefix)
    : new PostgresProgressRelay(store);
}
