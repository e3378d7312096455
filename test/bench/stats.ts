/** Summary of a sample of durations (milliseconds). */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** The q-quantile (0..1) of sorted values, by linear interpolation between closest ranks. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new Error('quantile of an empty sample');
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return low + (high - low) * (position - below);
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    min: sorted[0] as number,
    max: sorted.at(-1) as number,
  };
}

export function median(samples: readonly number[]): number {
  return quantile(
    [...samples].sort((a, b) => a - b),
    0.5,
  );
}

/** Milliseconds since `start` (a performance.now() reading). */
export function since(start: number): number {
  return performance.now() - start;
}

/** Runs `fn` and returns how long it took in milliseconds. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return since(start);
}

/** Milliseconds with a precision that suits their size. */
export function ms(value: number): string {
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function ratio(value: number, baseline: number): string {
  const r = value / baseline;
  if (!Number.isFinite(r)) return 'n/a';
  return r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}

export function perSecond(value: number): string {
  return value >= 100 ? `${value.toFixed(0)}/s` : `${value.toFixed(1)}/s`;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

/** Rounds for JSON: durations to 0.01 ms, rates to 0.1. */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function roundSummary(summary: Summary): Summary {
  return {
    n: summary.n,
    p50: round(summary.p50, 3),
    p99: round(summary.p99, 3),
    mean: round(summary.mean, 3),
    min: round(summary.min, 3),
    max: round(summary.max, 3),
  };
}
