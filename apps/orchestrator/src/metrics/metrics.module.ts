import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.ts';
import { OrchestratorMetrics } from './orchestrator-metrics.ts';

@Global()
@Module({
  controllers: [MetricsController],
  providers: [OrchestratorMetrics],
  exports: [OrchestratorMetrics],
})
export class MetricsModule {}
