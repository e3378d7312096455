/**
 * OTel's `http.server.request.duration` as a Prometheus histogram, defined once for every HTTP port a
 * Switchyard process serves (the orchestrator's API, a worker's /metrics and /health), so one query or
 * dashboard panel reads both apps' series under one name, with the same labels and buckets. Plain data:
 * each app builds the histogram in its own prom-client registry.
 */
const LABEL_NAMES = ['http_request_method', 'http_route', 'http_response_status_code'] as const;

export type HttpServerDurationLabel = (typeof LABEL_NAMES)[number];

/** The histogram's definition, a fresh copy each time: prom-client takes the buckets as a mutable array. */
export function httpServerDuration(): {
  name: string;
  help: string;
  labelNames: readonly HttpServerDurationLabel[];
  buckets: number[];
} {
  return {
    // The name and labels OTel's Prometheus exporter gives the metric and its attributes.
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template and status code',
    labelNames: LABEL_NAMES,
    // OTel's advice for http.server.request.duration.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  };
}

/** The methods OTel's HTTP conventions name; any other is `_OTHER`, so a client cannot mint series. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'CONNECT',
  'TRACE',
]);

/**
 * The labels of one answer. `route` must be a template the server matched (`/v1/jobs/:id`, `/metrics`),
 * or empty when none matched: never the request's path, or an unknown URL would make a series of its own.
 */
export function httpServerDurationLabels(
  method: string | undefined,
  route: string,
  status: number,
): Record<HttpServerDurationLabel, string> {
  return {
    http_request_method: method !== undefined && KNOWN_METHODS.has(method) ? method : '_OTHER',
    http_route: route,
    http_response_status_code: String(status),
  };
}
