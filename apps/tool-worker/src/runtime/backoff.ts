/** Exponential backoff with full jitter, capped: delay n of a reconnect loop. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}
