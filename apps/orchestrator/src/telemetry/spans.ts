import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

const tracer = trace.getTracer('switchyard-orchestrator');

/**
 * Runs `work` in a new active span and ends it; an exception marks the span as an error and is
 * rethrown. `parent` overrides the active context (e.g. a job's stored trace context).
 */
export function inSpan<T>(
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
      span.setAttribute('error.type', (error as Error).name);
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

export { SpanKind };
