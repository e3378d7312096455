import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ConfigError, type SwitchyardConfig } from '@switchyard/contracts';
import { PROBLEM_CONTENT_TYPE } from '../http/problem.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER } from '../runtime/tokens.ts';
import {
  METRICS_CHALLENGE,
  METRICS_CONTENT_TYPE,
  metricsRefusal,
  unauthorizedProblem,
} from './metrics-access.ts';
import { OrchestratorMetrics } from './orchestrator-metrics.ts';

/**
 * `orchestrator.metrics.port`: /metrics on a port of its own (on HOST), so that a NetworkPolicy or a
 * Service can expose the API without it. Only GET /metrics is answered; the bearer token, when set,
 * applies here too. Started once the app is up, closed before Redis (its gauges read Redis).
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | undefined;

  constructor(
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port } = this.config.orchestrator.metrics;
    if (port === undefined) return;
    const server = createServer((request, response) => {
      this.answer(request, response).catch((error: unknown) => {
        this.log.error({ err: error }, 'metrics scrape failed');
        if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain' });
        response.end('metrics scrape failed\n');
      });
    });
    await new Promise<void>((resolve, reject) => {
      // A taken port is the operator's to fix: a config error naming the key (exit code 2), as for PORT.
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new ConfigError('orchestrator.metrics.port', `port ${port} is already in use`)
            : error,
        ),
      );
      server.listen(port, this.env.host, () => {
        server.removeAllListeners('error');
        server.on('error', (error) => this.log.error({ err: error }, 'metrics listener failed'));
        resolve();
      });
    });
    this.server = server;
    this.log.info({ port: (server.address() as AddressInfo).port, host: this.env.host }, 'metrics listening');
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    response.setHeader('X-Content-Type-Options', 'nosniff');
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    const refusal = metricsRefusal(request.headers.authorization, this.config.orchestrator.metrics);
    if (refusal) {
      response
        .writeHead(401, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'WWW-Authenticate': METRICS_CHALLENGE })
        .end(JSON.stringify(unauthorizedProblem(refusal)));
      return;
    }
    const body = await this.metrics.registry.metrics();
    response
      .writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE })
      .end(request.method === 'HEAD' ? '' : body);
  }
}
