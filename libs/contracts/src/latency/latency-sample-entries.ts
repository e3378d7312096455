/** The Redis side's list entries (latency/redis-latency-samples.ts, redisKeys.latency). */

/** One list entry: the duration and when the call finished, so entries past the window are skipped. */
export function encodeLatencySample(durationMs: number, finishedAt: number): string {
  return `${Math.max(0, Math.round(durationMs))}@${finishedAt}`;
}

/** The durations of the entries no older than `windowMs`; malformed entries are skipped. */
export function recentDurations(entries: readonly string[], now: number, windowMs: number): number[] {
  const durations: number[] = [];
  for (const entry of entries) {
    const [ms, at] = entry.split('@').map(Number);
    if (ms === undefined || at === undefined || !Number.isFinite(ms) || !Number.isFinite(at)) continue;
    if (now - at <= windowMs) durations.push(ms);
  }
  return durations;
}
