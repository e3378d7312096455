export { ATTR } from './attributes.ts';
export { createLogger, type Logger, traceFields } from './logger.ts';
export { inSpan, SpanKind, tracerFor } from './spans.ts';
export { startTracing, stopTracing } from './tracing.ts';
