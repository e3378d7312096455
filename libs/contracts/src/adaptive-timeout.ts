import type { ServerConfig } from './config.ts';

export * from './latency/latency-sample-entries.ts';
export * from './latency/latency-samples.ts';

/**
 * Adaptive per-attempt timeouts (docs/semantics.md §6). Workers record the duration of every successful
 * call in two windows, the tool's and its server's (latency/latency-samples.ts: capped Redis lists, or
 * rows of PostgreSQL's latency_sample); whoever needs the effective timeout (a worker before a call, the
 * orchestrator for /v1/servers) reads them back and derives it here, so the whole fleet learns from the
 * same samples.
 */

/** Where an attempt's timeout came from. */
export type TimeoutBasis =
  /** `timeouts: static`: the configured `timeoutMs`. */
  | 'static'
  /** `timeouts: adaptive`, but too few recent samples yet: the configured `timeoutMs`. */
  | 'initial'
  /** clamp(factor × P95) of the server's recent calls (the tool has too few of its own). */
  | 'server'
  /** clamp(factor × P95) of the tool's own recent calls. */
  | 'tool';

export interface EffectiveTimeout {
  timeoutMs: number;
  basis: TimeoutBasis;
  /** The P95 the value derives from (bases `server` and `tool`). */
  p95Ms?: number;
  /** Recent samples behind it (0 for `static`). */
  samples: number;
}

/** Nearest-rank percentile (p in 0..100) of a non-empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/**
 * The per-attempt timeout of the next call of a tool: the tool's own P95 once it has `minSamples`
 * recent samples, else the server's, else the configured `timeoutMs` (the conservative start).
 */
export function effectiveTimeout(
  config: Pick<ServerConfig, 'timeouts' | 'timeoutMs' | 'adaptiveTimeouts'>,
  toolDurations: readonly number[],
  serverDurations: readonly number[],
): EffectiveTimeout {
  if (config.timeouts === 'static') return { timeoutMs: config.timeoutMs, basis: 'static', samples: 0 };
  const { factor, minMs, maxMs, minSamples } = config.adaptiveTimeouts;
  const [basis, durations] =
    toolDurations.length >= minSamples
      ? (['tool', toolDurations] as const)
      : (['server', serverDurations] as const);
  if (durations.length < minSamples) {
    return { timeoutMs: config.timeoutMs, basis: 'initial', samples: durations.length };
  }
  const p95Ms = percentile(durations, 95);
  const timeoutMs = Math.round(Math.min(maxMs, Math.max(minMs, factor * p95Ms)));
  return { timeoutMs, basis, p95Ms, samples: durations.length };
}

/** How a timeout is described to the model and in the outcome's `error`. */
export function describeTimeoutBasis(
  timeout: EffectiveTimeout,
  settings: Pick<ServerConfig['adaptiveTimeouts'], 'factor' | 'minMs' | 'maxMs'>,
): string {
  switch (timeout.basis) {
    case 'static':
      return 'the configured timeoutMs';
    case 'initial':
      return `the configured timeoutMs, until ${timeout.samples === 0 ? 'any' : 'enough'} recent calls are known`;
    default:
      return `adaptive: ${settings.factor} × the P95 (${timeout.p95Ms} ms) of the ${timeout.basis}'s last ${timeout.samples} successful calls, within ${settings.minMs}–${settings.maxMs} ms`;
  }
}
