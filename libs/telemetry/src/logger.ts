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

/**
 * Structured JSON logs for `service`; every line written inside a span carries its trace and span ids,
 * and each field once: a call that logs a field its logger is bound to already (`workerId`, a child's
 * `server`) with the same value leaves it to the binding, since pino writes both and JSON keeps one.
 */
export function createLogger(service: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
    hooks: {
      logMethod(args, method) {
        const [fields, ...rest] = args;
        return method.apply(this, [withoutBound(this, fields), ...rest] as Parameters<typeof method>);
      },
    },
  });
}

/** A logger's bindings, read once per logger (pino parses them from its serialized form on each ask). */
const boundFields = new WeakMap<Logger, Record<string, unknown>>();

/** The fields of a log call minus those the logger already writes with the same value. */
function withoutBound(logger: Logger, fields: unknown): unknown {
  if (typeof fields !== 'object' || fields === null || fields instanceof Error) return fields;
  let bound = boundFields.get(logger);
  if (!bound) {
    bound = logger.bindings();
    boundFields.set(logger, bound);
  }
  const entries = Object.entries(fields);
  const kept = entries.filter(([key, value]) => !(key in bound && Object.is(bound[key], value)));
  return kept.length === entries.length ? fields : Object.fromEntries(kept);
}
