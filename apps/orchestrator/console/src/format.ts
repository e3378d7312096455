/** A duration for people: milliseconds below a second, else seconds. */
export function formatMs(value: number | null): string {
  if (value === null) return '—';
  return value < 1_000 ? `${Math.round(value)} ms` : `${(value / 1_000).toFixed(value < 10_000 ? 2 : 1)} s`;
}

/** A longer span for people: `formatMs` under a minute, else minutes and seconds, or hours and minutes. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return formatMs(ms);
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** How long a job took (started → finished), or has been running; null before it started. */
export function jobDuration(
  job: { startedAt: string | null; finishedAt: string | null },
  nowMs: number,
): { ms: number; running: boolean } | null {
  if (!job.startedAt) return null;
  const end = job.finishedAt ? Date.parse(job.finishedAt) : nowMs;
  return { ms: Math.max(0, end - Date.parse(job.startedAt)), running: job.finishedAt === null };
}
