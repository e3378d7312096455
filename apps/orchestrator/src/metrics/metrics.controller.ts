import { Controller, Get, Header, Inject, Req, Res } from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Request, Response } from 'express';
import { ProblemException } from '../http/problem.ts';
import { CONFIG } from '../runtime/tokens.ts';
import { METRICS_CHALLENGE, METRICS_CONTENT_TYPE, metricsRefusal } from './metrics-access.ts';
import { OrchestratorMetrics } from './orchestrator-metrics.ts';

/**
 * Prometheus scrape endpoint on the API port. Open by default, like /health (keep it inside the
 * cluster); `orchestrator.metrics.bearerToken` asks scrapes for a token, and `orchestrator.metrics.port`
 * moves it to its own port (metrics-server.ts), after which this route is a 404.
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
  ) {}

  @Get()
  @Header('Content-Type', METRICS_CONTENT_TYPE)
  async scrape(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<string> {
    const settings = this.config.orchestrator.metrics;
    if (settings.port !== undefined)
      throw new ProblemException(
        'not-found',
        '/metrics is served on its own port (orchestrator.metrics.port)',
      );
    const refusal = metricsRefusal(request.headers.authorization, settings);
    if (refusal) {
      response.setHeader('WWW-Authenticate', METRICS_CHALLENGE);
      throw new ProblemException('unauthorized', refusal);
    }
    return this.metrics.registry.metrics();
  }
}
