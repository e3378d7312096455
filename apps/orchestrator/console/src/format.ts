/** A duration for people: milliseconds below a second, else seconds. */
export function formatMs(value: number | null): string {
  if (value === null) return '—';
  return value < 1_000 ? `${Math.round(value)} ms` : `${(value / 1_000).toFixed(value < 10_000 ? 2 : 1)} s`;
}
