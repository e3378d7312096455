import { Inject, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Redis } from 'ioredis';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { CatalogReader } from '../catalog/catalog-reader.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, REDIS } from '../runtime/tokens.ts';
import { FleetController } from './fleet.controller.ts';
import { ToolCallDispatcher } from './tool-call-dispatcher.ts';

@Module({
  imports: [CatalogModule, AuthModule],
  controllers: [FleetController],
  providers: [
    {
      provide: ToolCallDispatcher,
      inject: [CONFIG, ENV, REDIS, CatalogReader, LOGGER],
      useFactory: (
        config: SwitchyardConfig,
        env: OrchestratorEnv,
        redis: Redis,
        catalog: CatalogReader,
        log: Logger,
      ) =>
        new ToolCallDispatcher({
          config,
          prefix: env.prefix,
          redis,
          catalog,
          onError: (error) => log.warn({ err: error }, 'dispatcher error'),
        }),
    },
  ],
  exports: [ToolCallDispatcher],
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
