import { trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/** The active span's ids on every line written inside a span, so logs and traces join up. */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Structured JSON logs for `service`; every line written inside a span carries its trace and span ids. */
export function createLogger(service: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
  });
}
