import type { Attributes, Context, Span } from '@opentelemetry/api';
import { inSpan as inTracerSpan, SpanKind, tracerFor } from '@switchyard/telemetry';
import { ORCHESTRATOR_SERVICE } from './service.ts';

const tracer = tracerFor(ORCHESTRATOR_SERVICE);

/** libs/telemetry's inSpan on the orchestrator's tracer. */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return inTracerSpan(tracer, name, options, work);
}

export { SpanKind };
