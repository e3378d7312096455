import { describeTimeoutBasis, type EffectiveTimeout, type ServerConfig } from '@switchyard/contracts';

/** What the model and the outcome's `error` are told about a call that timed out. */
export interface FiredLimit {
  text: string;
  error: string;
}

/**
 * Names the limit that actually fired (docs/semantics.md §6). The SDK reports both as RequestTimeout:
 * the per-attempt timeout (which progress restarts) as "Request timed out" with `data.timeout`, the total
 * cap progress cannot extend (`maxTimeoutMs`) with `data.maxTotalTimeout`. Telling them apart matters: a
 * 20 s call cut at its 12 s cap must not be reported as "did not finish within 3000 ms".
 */
export function firedLimit(
  server: string,
  tool: string,
  error: unknown,
  attempt: EffectiveTimeout,
  config: ServerConfig,
): FiredLimit {
  const data = totalLimitOf(error);
  const effect = 'and was cancelled; it may or may not have taken effect.';
  if (data) {
    const elapsed = typeof data.totalElapsed === 'number' ? ` after ${data.totalElapsed} ms` : '';
    return {
      text: `The call to ${server}/${tool} kept reporting progress but did not finish within ${data.maxTotalTimeout} ms, its total limit (maxTimeoutMs, which progress cannot extend), ${effect}`,
      error: `timed out: total limit maxTimeoutMs ${data.maxTotalTimeout} ms fired${elapsed}`,
    };
  }
  const basis = describeTimeoutBasis(attempt, config.adaptiveTimeouts);
  return {
    text: `The call to ${server}/${tool} did not finish within ${attempt.timeoutMs} ms, its per-attempt timeout (${basis}; progress restarts it), ${effect}`,
    error: `timed out: per-attempt timeout ${attempt.timeoutMs} ms (${attempt.basis}) fired`,
  };
}

/** The SDK's detail of a timeout that was the total limit (maxTimeoutMs); undefined for any other error. */
export function totalLimitOf(
  error: unknown,
): { maxTotalTimeout: number; totalElapsed?: unknown } | undefined {
  const data = (error as { data?: { maxTotalTimeout?: unknown; totalElapsed?: unknown } } | null)?.data;
  if (typeof data?.maxTotalTimeout !== 'number') return undefined;
  return { maxTotalTimeout: data.maxTotalTimeout, totalElapsed: data.totalElapsed };
}
