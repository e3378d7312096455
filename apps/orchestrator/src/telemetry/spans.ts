import type { Attributes, Context, Span } from '@opentelemetry/api';
import {
  inSettlingSpan as inTracerSettlingSpan,
  inSpan as inTracerSpan,
  type SettlingSpan,
  SpanKind,
  tracerFor,
} from '@switchyard/telemetry';
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

/** libs/telemetry's inSettlingSpan on the orchestrator's tracer. */
export function inSettlingSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: (span: Span) => Promise<T>,
): Promise<{ value: T; settling: SettlingSpan }> {
  return inTracerSettlingSpan(tracer, name, options, work);
}

export { SpanKind };
