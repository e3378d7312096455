import { readLedger } from '@switchyard/example-mcp-servers/ledger';

export interface Interval {
  start: number;
  end: number;
  label?: string;
}

/** The recorder server's ledger, as call intervals sorted by start. */
export function recordedIntervals(path: string): Interval[] {
  return (readLedger(path) as unknown as Interval[]).sort((a, b) => a.start - b.start);
}

/** Pairs of consecutive calls (by start time) where the next started before the previous ended. */
export function overlaps(sorted: Interval[]): Array<[Interval, Interval]> {
  const found: Array<[Interval, Interval]> = [];
  for (let index = 1; index < sorted.length; index++) {
    const previous = sorted[index - 1] as Interval;
    const current = sorted[index] as Interval;
    if (current.start < previous.end) found.push([previous, current]);
  }
  return found;
}

/** Total time during which a call of `a` and a call of `b` ran at the same moment. */
export function sharedTime(a: Interval[], b: Interval[]): number {
  let total = 0;
  for (const x of a) {
    for (const y of b) total += Math.max(0, Math.min(x.end, y.end) - Math.max(x.start, y.start));
  }
  return total;
}
