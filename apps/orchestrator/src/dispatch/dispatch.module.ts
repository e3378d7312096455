import { Inject, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Store, SwitchyardConfig } from '@switchyard/contracts';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import { CallQuotas } from '../quotas/call-quotas.ts';
import { QuotasModule } from '../quotas/quotas.module.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, STORE } from '../runtime/tokens.ts';
import { FleetController } from './fleet.controller.ts';
import { FleetTimeouts } from './fleet-timeouts.ts';
import { ProgressListener } from './progress-listener.ts';
import { ToolCallDispatcher } from './tool-call-dispatcher.ts';

@Module({
  imports: [CatalogModule, AuthModule, QuotasModule],
  controllers: [FleetController],
  providers: [
    FleetTimeouts,
    ProgressListener,
    {
      provide: ToolCallDispatcher,
      inject: [CONFIG, ENV, STORE, CatalogReader, CallQuotas, LOGGER],
      useFactory: (
        config: SwitchyardConfig,
        env: OrchestratorEnv,
        store: Store,
        catalog: CatalogReader,
        quotas: CallQuotas,
        log: Logger,
      ) =>
        new ToolCallDispatcher({
          config,
          prefix: env.prefix,
          store,
          catalog,
          pace: (request) => quotas.delayFor(request.labels?.team, request),
          onError: (error) => log.warn({ err: error }, 'dispatcher error'),
        }),
    },
  ],
  exports: [ToolCallDispatcher, ProgressListener],
})
export class DispatchModule implements OnModuleInit, OnModuleDestroy {
  constructor(@Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher) {}

  async onModuleInit(): Promise<void> {
    await this.dispatcher.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.dispatcher.close();
  }
}
