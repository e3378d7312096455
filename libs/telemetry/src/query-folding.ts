import { type Context, type Span, trace } from '@opentelemetry/api';
import type { ReadableSpan, Span as SdkSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { ATTR } from './attributes.ts';

/** The instrumentation scope of `pg.query` (and `pg.connect`) spans. */
export const PG_INSTRUMENTATION_SCOPE = '@opentelemetry/instrumentation-pg';

/** `fold` (the default): pg.query spans become two attributes of their parent; `all`: every one is kept. */
export type PgQuerySpans = 'fold' | 'all';

export const PG_QUERY_SPANS_VARIABLE = 'SWITCHYARD_TRACE_PG_QUERIES';

/** Reads SWITCHYARD_TRACE_PG_QUERIES; any other value than `fold` or `all` stops the process naming it. */
export function pgQuerySpansFromEnv(env: NodeJS.ProcessEnv = process.env): PgQuerySpans {
  const value = env[PG_QUERY_SPANS_VARIABLE];
  if (value === undefined || value === '' || value === 'fold') return 'fold';
  if (value === 'all') return 'all';
  throw new Error(`${PG_QUERY_SPANS_VARIABLE}: must be "fold" or "all", got "${value}"`);
}

interface Folded {
  parent: Span | undefined;
}

/**
 * Folds PostgreSQL query spans into their parent before export: a job's trace made ~40 `pg.query`
 * spans out of 55, burying the call path. Each folded query adds 1 to the parent's
 * `switchyard.pg.queries` and its duration to `switchyard.pg.query_ms`, and is not exported. A query
 * span has no children (connect spans are off, see the orchestrator's instrument.ts), so leaving it out
 * breaks no parent link; every other span goes on to `next` unchanged.
 */
export class QueryFoldingSpanProcessor implements SpanProcessor {
  private readonly folded = new WeakMap<SdkSpan | ReadableSpan, Folded>();
  private readonly counts = new WeakMap<Span, { queries: number; ms: number }>();

  constructor(private readonly next: SpanProcessor) {}

  onStart(span: SdkSpan, parentContext: Context): void {
    if (span.instrumentationScope.name !== PG_INSTRUMENTATION_SCOPE) {
      this.next.onStart(span, parentContext);
      return;
    }
    this.folded.set(span, { parent: trace.getSpan(parentContext) });
  }

  onEnd(span: ReadableSpan): void {
    const folded = this.folded.get(span);
    if (!folded) {
      this.next.onEnd(span);
      return;
    }
    const { parent } = folded;
    // A parent that ended first (a query nobody awaited) takes no more attributes: the query is dropped.
    if (!parent?.isRecording()) return;
    const [seconds, nanos] = span.duration;
    const ms = seconds * 1000 + nanos / 1e6;
    const count = this.counts.get(parent) ?? { queries: 0, ms: 0 };
    count.queries += 1;
    count.ms += ms;
    this.counts.set(parent, count);
    parent.setAttributes({ [ATTR.PG_QUERIES]: count.queries, [ATTR.PG_QUERY_MS]: Math.round(count.ms) });
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
