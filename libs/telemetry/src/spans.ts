import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { ATTR } from './attributes.ts';

/**
 * Runs `work` in a new active span of `tracer` and ends it; an exception marks the span as an error and
 * is rethrown. `parent` overrides the active context (e.g. a job's stored trace context).
 */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const run = async (span: Span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      span.setAttribute(ATTR.ERROR_TYPE, (error as Error).name);
      throw error;
    } finally {
      span.end();
    }
  };
  const spanOptions = {
    kind: options.kind ?? SpanKind.INTERNAL,
    ...(options.attributes ? { attributes: options.attributes } : {}),
  };
  return options.parent
    ? tracer.startActiveSpan(name, spanOptions, options.parent, run)
    : tracer.startActiveSpan(name, spanOptions, run);
}

/** The tracer of one app (`switchyard-orchestrator`, `switchyard-tool-worker`). */
export function tracerFor(service: string): Tracer {
  return trace.getTracer(service);
}

export { SpanKind };
