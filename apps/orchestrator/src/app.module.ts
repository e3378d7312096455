import { type DynamicModule, Module } from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import { AgentModule } from './agent/agent.module.ts';
import { ApiDocsModule } from './api-docs/api-docs.module.ts';
import { AuthModule } from './auth/auth.module.ts';
import { CatalogModule } from './catalog/catalog.module.ts';
import { ConsoleModule } from './console/console.module.ts';
import { QueueDashboardModule } from './dashboard/queue-dashboard.module.ts';
import { DispatchModule } from './dispatch/dispatch.module.ts';
import { FleetModule } from './fleet/fleet.module.ts';
import { GatewayModule } from './gateway/gateway.module.ts';
import { HealthModule } from './health/health.module.ts';
import { InputsModule } from './inputs/inputs.module.ts';
import { JobsModule } from './jobs/jobs.module.ts';
import { MetricsModule } from './metrics/metrics.module.ts';
import { ModelsModule } from './models/models.module.ts';
import { ReconcileModule } from './reconcile/reconcile.module.ts';
import type { Logger } from './runtime/logger.ts';
import type { OrchestratorEnv } from './runtime/orchestrator-env.ts';
import { RuntimeModule } from './runtime/runtime.module.ts';
import { WebhooksModule } from './webhooks/webhooks.module.ts';

@Module({})
export class AppModule {
  static forRoot(config: SwitchyardConfig, env: OrchestratorEnv, log: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        RuntimeModule.forRoot(config, env, log),
        MetricsModule,
        AuthModule,
        CatalogModule,
        DispatchModule,
        JobsModule,
        ModelsModule,
        InputsModule,
        AgentModule,
        ReconcileModule,
        HealthModule,
        FleetModule,
        GatewayModule,
        QueueDashboardModule,
        ApiDocsModule,
        WebhooksModule,
        ConsoleModule.forRoot(log),
      ],
    };
  }
}
