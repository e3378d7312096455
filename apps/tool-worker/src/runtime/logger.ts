import { trace } from '@opentelemetry/api';
import pino from 'pino';

/** The active span's ids on every line written inside a span, so logs and traces join up. */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Structured JSON logs; every line written inside a span carries its trace and span ids. */
export function createLogger(bindings: Record<string, unknown>): pino.Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'switchyard-tool-worker', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
  });
}

export type Logger = pino.Logger;
