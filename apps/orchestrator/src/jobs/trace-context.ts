import { randomBytes } from 'node:crypto';
import { carrierFrom, traceIdOf } from '@switchyard/contracts';

/**
 * The trace context a new job belongs to: the active one (the `POST /v1/jobs` request span, when
 * OpenTelemetry is running), else a fresh W3C context, so tool calls always carry one trace id.
 */
export function jobTraceContext(): { traceId: string; traceparent: string } {
  const active = carrierFrom();
  const activeTraceId = traceIdOf(active);
  if (active.traceparent && activeTraceId) return { traceId: activeTraceId, traceparent: active.traceparent };
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${spanId}-01` };
}
