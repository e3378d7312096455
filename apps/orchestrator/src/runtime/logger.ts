import type { LoggerService } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import pino from 'pino';

export type Logger = pino.Logger;

/** The active span's ids on every line written inside a span, so logs and traces join up. */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Structured JSON logs; every line written inside a span carries its trace and span ids. */
export function createLogger(bindings: Record<string, unknown>): Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'switchyard-orchestrator', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: traceFields,
  });
}

/** Routes Nest's own log lines (routes mapped, bootstrap errors) into the same JSON stream. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pinoLogger: Logger) {}
  log(message: unknown, context?: string): void {
    this.pinoLogger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.pinoLogger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.pinoLogger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.pinoLogger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.pinoLogger.trace({ context }, String(message));
  }
}
