import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';

let sdk: NodeSDK | undefined;

/**
 * Starts OpenTelemetry for this process. Spans are exported over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set — Jaeger accepts OTLP directly; without
 * it, context still propagates (trace ids in jobs, logs and MCP `_meta`) but nothing is exported.
 */
export function startTracing(serviceName: string, instrumentations: Instrumentation[] = []): void {
  if (sdk) return;
  const exporting = Boolean(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  );
  sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? serviceName,
    spanProcessors: exporting ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })] : [],
    instrumentations,
  });
  sdk.start();
}

/** Flushes spans still buffered; called last on shutdown. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
}
