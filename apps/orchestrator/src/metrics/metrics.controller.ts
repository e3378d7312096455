import { Controller, Get, Header, Inject } from '@nestjs/common';
import { OrchestratorMetrics } from './orchestrator-metrics.ts';

/** Prometheus scrape endpoint (unauthenticated, like /health: keep it inside the cluster). */
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
