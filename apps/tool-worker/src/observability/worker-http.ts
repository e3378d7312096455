import { createServer, type Server } from 'node:http';
import type { Logger } from '../runtime/logger.ts';
import type { SessionPool } from '../sessions/session-pool.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

/**
 * The worker's operator endpoints: /metrics (Prometheus), /health/live (the process answers) and
 * /health/ready (at least one MCP session is ready, so the worker can take calls).
 */
export async function startWorkerHttp(
  port: number,
  deps: { pool: SessionPool; metrics: WorkerMetrics; log: Logger },
): Promise<Server> {
  const server = createServer((request, response) => {
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
        reply(ready ? 200 : 503, { status: ready ? 'ok' : 'no ready session', sessions });
        return;
      }
      default:
        reply(404, { message: `no route ${request.url}` });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  deps.log.info(
    { port: typeof address === 'object' && address ? address.port : port },
    'worker http listening',
  );
  return server;
}
