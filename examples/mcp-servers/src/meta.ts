/** The subset of the SDK's per-request `extra` that the servers read. */
export interface RequestContext {
  _meta?: Record<string, unknown>;
  signal: AbortSignal;
}

/**
 * The W3C traceparent a caller put in `params._meta`, if any. It goes into ledger records
 * so tracing tests can check that the trace context crossed the queue and the MCP hop.
 */
export function traceparentOf(extra: RequestContext): string | undefined {
  const value = extra._meta?.traceparent;
  return typeof value === 'string' ? value : undefined;
}

/** Why a request was aborted: the client's cancellation reason, or the abort error's message. */
export function abortReason(signal: AbortSignal): string | undefined {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string') return reason;
  return reason instanceof Error ? reason.message : undefined;
}

/** Wall-clock epoch milliseconds with sub-millisecond precision, comparable across processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
