/** The orchestrator's OpenTelemetry service name, tracer name and `service` field of its log lines. */
export const ORCHESTRATOR_SERVICE = 'switchyard-orchestrator';
