import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.ts';
import { MetricsServer } from './metrics-server.ts';
import { OrchestratorMetrics } from './orchestrator-metrics.ts';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [OrchestratorMetrics, MetricsServer],
  exports: [OrchestratorMetrics],
})
export class MetricsModule {}
