import type { LoggerService } from '@nestjs/common';
import { createLogger as createServiceLogger, type Logger } from '@switchyard/telemetry';
import { ORCHESTRATOR_SERVICE } from '../telemetry/service.ts';

export type { Logger };

/** Structured JSON logs of the orchestrator; every line written inside a span carries its trace and span ids. */
export function createLogger(bindings: Record<string, unknown>): Logger {
  return createServiceLogger(ORCHESTRATOR_SERVICE, bindings);
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
