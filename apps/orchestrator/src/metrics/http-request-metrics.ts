import type { NextFunction, Request, Response } from 'express';
import type { OrchestratorMetrics } from './orchestrator-metrics.ts';

/**
 * The route template a request matched (`/v1/jobs/:id`), never its URL: ids would make a series per job.
 * A router mounted under a path (the queue dashboard) adds its mount path. No match (a 404, the
 * console's static files) is the mount path of what answered, or empty.
 */
export function routeTemplate(request: Request): string {
  const path = (request.route as { path?: unknown } | undefined)?.path;
  return path === undefined ? request.baseUrl : `${request.baseUrl}${String(path)}`;
}

/**
 * `http_server_request_duration_seconds` for every answer on the API port, from the first byte read to
 * the connection done with the answer (a stream's whole life; an answer the client hung up on counts
 * with the status it had). Installed first in main.ts, so refusals of the body parser and guards count.
 */
export function httpRequestMetrics(metrics: OrchestratorMetrics) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    response.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequest(request.method, routeTemplate(request), response.statusCode, seconds);
    });
    next();
  };
}
