import { createLogger as createServiceLogger, type Logger } from '@switchyard/telemetry';
import { WORKER_SERVICE } from '../telemetry/service.ts';

/** Structured JSON logs of the worker; every line written inside a span carries its trace and span ids. */
export function createLogger(bindings: Record<string, unknown>): Logger {
  return createServiceLogger(WORKER_SERVICE, bindings);
}

export type { Logger };
