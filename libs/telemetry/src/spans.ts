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
import { SettlingSpan } from './outcome-spans.ts';

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

/**
 * Like inSpan, but the span outlives `work`: when `work` resolves, its end time is taken and the caller
 * settles it once the outcome the span belongs to is known (SettlingSpan). An exception ends it as inSpan
 * does. The caller must settle it on every path.
 */
export async function inSettlingSpan<T>(
  tracer: Tracer,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: (span: Span) => Promise<T>,
): Promise<{ value: T; settling: SettlingSpan }> {
  const spanOptions = {
    kind: options.kind ?? SpanKind.INTERNAL,
    ...(options.attributes ? { attributes: options.attributes } : {}),
  };
  return tracer.startActiveSpan(name, spanOptions, async (span) => {
    const settling = new SettlingSpan(span);
    try {
      const value = await work(span);
      settling.stop();
      return { value, settling };
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      span.setAttribute(ATTR.ERROR_TYPE, (error as Error).name);
      settling.settle();
      throw error;
    }
  });
}

/** The tracer of one app (`switchyard-orchestrator`, `switchyard-tool-worker`). */
export function tracerFor(service: string): Tracer {
  return trace.getTracer(service);
}

export { SpanKind };
