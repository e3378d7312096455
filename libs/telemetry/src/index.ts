export { ATTR } from './attributes.ts';
export {
  type HttpServerDurationLabel,
  httpServerDuration,
  httpServerDurationLabels,
} from './http-server-metrics.ts';
export { createLogger, type Logger, traceFields } from './logger.ts';
export { markJobCallOutcome, markOutcome, SettlingSpan } from './outcome-spans.ts';
export {
  PG_QUERY_SPANS_VARIABLE,
  type PgQuerySpans,
  pgQuerySpansFromEnv,
  QueryFoldingSpanProcessor,
} from './query-folding.ts';
export { inSettlingSpan, inSpan, SpanKind, tracerFor } from './spans.ts';
export { startTracing, stopTracing } from './tracing.ts';
