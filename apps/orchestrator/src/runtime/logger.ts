import type { LoggerService } from '@nestjs/common';
import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs; lines about a job carry its trace id (see jobs/ and agent/). */
export function createLogger(bindings: Record<string, unknown>): Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'switchyard-orchestrator', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
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
