import pino from 'pino';

/** Structured JSON logs; every line about a call carries its trace id (see execution/). */
export function createLogger(bindings: Record<string, unknown>): pino.Logger {
  return pino({
    level: process.env.LOG_LEVEL ?? 'info',
    base: { service: 'switchyard-tool-worker', ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

export type Logger = pino.Logger;
