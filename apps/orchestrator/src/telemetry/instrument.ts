// Imported first by main.ts, so the SDK is running before any module it instruments is loaded.
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { startTracing } from './tracing.ts';

startTracing('switchyard-orchestrator', [
  new HttpInstrumentation({
    // Probes and scrapes are not worth a trace each.
    ignoreIncomingRequestHook: (request) => /^\/(health|metrics)/.test(request.url ?? ''),
  }),
  new ExpressInstrumentation(),
  new PgInstrumentation(),
]);
