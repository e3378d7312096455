// Imported first by main.ts, so the SDK is running before any module it instruments is loaded.
import { startTracing } from '@switchyard/telemetry';
import { WORKER_SERVICE } from './service.ts';

startTracing(WORKER_SERVICE);
