/** The worker's OpenTelemetry service name, tracer name and `service` field of its log lines. */
export const WORKER_SERVICE = 'switchyard-tool-worker';
