import './telemetry/instrument.ts';
import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ConfigError, loadConfig, ORCHESTRATOR_UNUSED_SECRETS } from '@switchyard/contracts';
import { AppModule } from './app.module.ts';
import { CONSOLE_PATH } from './console/console.module.ts';
import { DASHBOARD_PATH } from './dashboard/queue-dashboard.module.ts';
import { DependencyTimeoutInterceptor } from './http/dependency-timeout.interceptor.ts';
import { HttpErrorsFilter } from './http/http-errors.filter.ts';
import { JsonBodyGuard } from './http/json-body.guard.ts';
import { RouteSpanInterceptor } from './http/route-span.interceptor.ts';
import { securityHeaders } from './http/security-headers.ts';
import { httpRequestMetrics } from './metrics/http-request-metrics.ts';
import { OrchestratorMetrics } from './metrics/orchestrator-metrics.ts';
import { teamModelAccesses } from './models/team-models-registry.ts';
import { DependencyHealth } from './runtime/dependency-health.ts';
import { createLogger, PinoNestLogger } from './runtime/logger.ts';
import { readOrchestratorEnv } from './runtime/orchestrator-env.ts';

/** `npm run orchestrator`: the HTTP API and this replica's share of agent runs, until SIGTERM. */
async function main(): Promise<void> {
  const env = readOrchestratorEnv();
  const log = createLogger({ replicaId: env.replicaId });
  // Every known background promise handles its errors; one that does not is a bug whose effects are
  // unknown, so the process does not carry on in that state (Node's default), but says so in its log
  // first. Peers take over: BullMQ hands its jobs on, and calls stay truthful through the job fence.
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection: exiting');
    process.exit(1);
  });
  const config = loadConfig(env.configPath, process.env, { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS });
  // Before Nest: a bad team model entry is a config error naming its key, not an aborted injector.
  teamModelAccesses(config, process.env);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, env, log), {
    logger: new PinoNestLogger(log),
    bodyParser: false,
  });
  // First, so that every answer is counted: 404s and the body parser's and guards' refusals too.
  app.use(httpRequestMetrics(app.get(OrchestratorMetrics)));
  // Then, so that every answer carries them: errors of the body parser and of guards too. `/docs` is
  // ApiDocsController's reference UI.
  app.use(...securityHeaders({ console: CONSOLE_PATH, docs: '/docs', dashboard: DASHBOARD_PATH }));
  app.useBodyParser('json', { limit: config.orchestrator.maxRequestBytes });
  const settings = config.orchestrator;
  app.useGlobalFilters(new HttpErrorsFilter(log, settings.retryAfterSeconds));
  app.useGlobalGuards(new JsonBodyGuard());
  app.useGlobalInterceptors(
    new RouteSpanInterceptor(),
    new DependencyTimeoutInterceptor(
      app.get(Reflector),
      app.get(DependencyHealth),
      settings.dependencyTimeoutMs,
    ),
  );
  limitSlowClients(app.getHttpServer(), settings);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(env.port, env.host);
  // The bound port, which differs from PORT when PORT=0 asks for any free one.
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : env.port;
  log.info({ url: await app.getUrl(), port }, 'orchestrator listening');
}

/**
 * A client that trickles its headers or body holds a socket and a parser; Node's defaults let it do
 * so for 300 s. Node checks these limits every connectionsCheckingInterval (30 s by default), which
 * is read when the server starts listening, so it is set here too.
 */
function limitSlowClients(server: Server, limits: { requestTimeoutMs: number; headersTimeoutMs: number }) {
  server.requestTimeout = limits.requestTimeoutMs;
  server.headersTimeout = limits.headersTimeoutMs;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    1_000,
    limits.headersTimeoutMs,
  );
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`switchyard orchestrator: config error: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`switchyard orchestrator: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
