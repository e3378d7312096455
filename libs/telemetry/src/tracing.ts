import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { type Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type PgQuerySpans, QueryFoldingSpanProcessor } from './query-folding.ts';

let provider: TracerProvider | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

/**
 * Starts OpenTelemetry for this process: the W3C trace-context and baggage propagators, an
 * AsyncLocalStorage context manager, a tracer provider and the given instrumentations. Spans are
 * exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set — Jaeger
 * accepts OTLP directly; without it, context still propagates (trace ids in jobs, logs and MCP `_meta`)
 * but nothing is exported. This is what NodeSDK sets up for traces, without loading the metrics and
 * logs SDKs and resource detectors that Switchyard does not use (they cost ~1 s of start-up per process
 * on a busy machine). `pgQuerySpans` (SWITCHYARD_TRACE_PG_QUERIES): `fold`, the default, exports
 * PostgreSQL query spans only as counts on their parent (query-folding.ts); `all` exports each one.
 */
export function startTracing(
  serviceName: string,
  instrumentations: Instrumentation[] = [],
  options: { pgQuerySpans?: PgQuerySpans } = {},
): void {
  if (provider) return;
  const exporting = Boolean(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  );
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  provider = new TracerProvider({
    // process.pid, host.name and OTEL_RESOURCE_ATTRIBUTES, as NodeSDK would: they tell replicas apart.
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] }))
      .merge(resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? serviceName })),
    spanProcessors: exporting ? [exportProcessor(options.pgQuerySpans ?? 'fold')] : [],
  });
  trace.setGlobalTracerProvider(provider);
  if (instrumentations.length > 0) registerInstrumentations({ instrumentations, tracerProvider: provider });
}

function exportProcessor(pgQuerySpans: PgQuerySpans): SpanProcessor {
  const batch = new BatchSpanProcessor({ exporter: new OTLPTraceExporter() });
  return pgQuerySpans === 'fold' ? new QueryFoldingSpanProcessor(batch) : batch;
}

/** Flushes spans still buffered; called last on shutdown. */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
  provider = undefined;
}
