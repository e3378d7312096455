// Imported first by main.ts, so the SDK is running before any module it instruments is loaded.
import { startTracing } from './tracing.ts';

startTracing('switchyard-tool-worker');
