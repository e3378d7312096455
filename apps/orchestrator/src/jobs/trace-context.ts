import { randomBytes } from 'node:crypto';

/**
 * A W3C trace context for a new job, so its tool calls carry one trace id end to end.
 * (When OpenTelemetry is wired in, the HTTP request's own span context takes this place.)
 */
export function newTraceContext(): { traceId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${spanId}-01` };
}
