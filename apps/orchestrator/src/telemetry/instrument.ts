// Imported first by main.ts, so the SDK is running before any module it instruments is loaded.
// No express instrumentation: its per-middleware spans would hide the HTTP server span from
// RouteSpanInterceptor, which names that span after the Nest route instead.
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { pgQuerySpansFromEnv, startTracing } from '@switchyard/telemetry';
import { ORCHESTRATOR_SERVICE } from './service.ts';

startTracing(
  ORCHESTRATOR_SERVICE,
  [
    new HttpInstrumentation({
      // Probes and scrapes are not worth a trace each.
      ignoreIncomingRequestHook: (request) => /^\/(health|metrics)/.test(request.url ?? ''),
    }),
    // Queries inside a job's trace only: background sweeps outside any trace are not a trace each, and a
    // pool-checkout span per query is not worth it (it doubled the spans of an agent step). By default the
    // query spans are folded into counts on their parent (SWITCHYARD_TRACE_PG_QUERIES, docs/configuration.md).
    new PgInstrumentation({ ignoreConnectSpans: true, requireParentSpan: true }),
  ],
  { pgQuerySpans: pgQuerySpansFromEnv() },
);
