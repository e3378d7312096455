import type { Store } from '../store/store.ts';
import { PostgresLatencySamples } from './postgres-latency-samples.ts';
import { RedisLatencySamples } from './redis-latency-samples.ts';

/** How much of the past a timeout learns from (servers.<s>.adaptiveTimeouts). */
export interface LatencyWindow {
  /** At most this many of the most recent samples per window. */
  windowSamples: number;
  /** Samples older than this are not counted. */
  windowMs: number;
}

/** The recent successful durations (ms) of one tool and of its whole server, in no particular order. */
export interface ToolLatencies {
  tool: number[];
  server: number[];
}

/**
 * The fleet's recent successful call durations, per server and per tool (docs/semantics.md §6): every
 * worker adds to them and derives its adaptive timeouts from them, the orchestrator shows them.
 */
export interface LatencySamples {
  /**
   * Adds one `ok` call's duration to its tool's and its server's windows and reads both back, in one
   * round trip: a busy worker never reads separately.
   */
  record(server: string, tool: string, durationMs: number, window: LatencyWindow): Promise<ToolLatencies>;
  /** The server's window and each of `tools`' (in the same order), in one round trip. */
  read(
    server: string,
    tools: readonly string[],
    window: LatencyWindow,
  ): Promise<{ server: number[]; tools: number[][] }>;
}

export interface LatencySamplesOptions {
  /** A trim of old samples failed (PostgreSQL; retried later, reads are bounded either way). */
  onTrimError?: (error: unknown) => void;
}

export function latencySamples(store: Store, options: LatencySamplesOptions = {}): LatencySamples {
  return store.kind === 'redis'
    ? new RedisLatencySamples(store.redis, store.prefix)
    : new PostgresLatencySamples(store.pool, options.onTrimError);
}
