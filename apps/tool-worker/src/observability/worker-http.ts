import { createServer, type Server } from 'node:http';
import { ConfigError } from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { SessionPool } from '../sessions/session-pool.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

/** What the worker serves; a request for anything else counts under no route, never under its path. */
const ROUTES: ReadonlySet<string> = new Set(['/metrics', '/health/live', '/health/ready']);

/**
 * The worker's operator endpoints: /metrics (Prometheus), /health/live (the process answers) and
 * /health/ready (at least one MCP session is ready and the host's clock is within bounds of the store's,
 * so the worker can take calls).
 */
export async function startWorkerHttp(
  port: number,
  deps: {
    pool: SessionPool;
    metrics: WorkerMetrics;
    log: Logger;
    /** Set while the worker refuses calls for its clock (ClockOffsetGate, postgres only): why, and the numbers. */
    clockRefusal?: () => { status: string; offsetMs: number; limitMs: number } | undefined;
  },
): Promise<Server> {
  const server = createServer((request, response) => {
    const started = process.hrtime.bigint();
    // On close, as the orchestrator counts: the answer is done (or the client gone) with its status.
    response.once('close', () => {
      const route = request.url !== undefined && ROUTES.has(request.url) ? request.url : '';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      deps.metrics.httpRequest(request.method, route, response.statusCode, seconds);
    });
    const reply = (status: number, body: unknown, type = 'application/json') => {
      response.writeHead(status, { 'content-type': type });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    switch (request.url) {
      case '/metrics':
        deps.metrics.registry.metrics().then(
          (text) => reply(200, text, deps.metrics.registry.contentType),
          (error: unknown) => reply(500, { message: String(error) }),
        );
        return;
      case '/health/live':
        reply(200, { status: 'ok' });
        return;
      case '/health/ready': {
        const sessions = deps.pool.statuses();
        const ready = Object.values(sessions).some((session) => session.state === 'ready');
        const clock = deps.clockRefusal?.();
        if (clock) {
          reply(503, { status: clock.status, clock, sessions });
          return;
        }
        reply(ready ? 200 : 503, { status: ready ? 'ok' : 'no ready session', sessions });
        return;
      }
      default:
        reply(404, { message: `no route ${request.url}` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(port, error)));
    server.listen(port, () => resolve());
  });
  deps.log.info({ port: listeningPort(server) }, 'worker http listening');
  return server;
}

/** The port the server really listens on (WORKER_HTTP_PORT=0 lets the OS pick one). */
export function listeningPort(server: Server): number | undefined {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : undefined;
}

/**
 * A second worker on one host would otherwise die with a bare `EADDRINUSE :::9464` stack: name the
 * variable and the ways out, as a config error (exit code 2).
 */
function listenError(port: number, error: NodeJS.ErrnoException): Error {
  if (error.code === 'EADDRINUSE') {
    return new ConfigError(
      'WORKER_HTTP_PORT',
      `port ${port} is already in use on this host (another worker?); set WORKER_HTTP_PORT=0 for any free port or WORKER_HTTP_PORT=off to disable /metrics and /health`,
    );
  }
  if (error.code === 'EACCES') {
    return new ConfigError('WORKER_HTTP_PORT', `not allowed to listen on port ${port}: ${error.message}`);
  }
  return error;
}
