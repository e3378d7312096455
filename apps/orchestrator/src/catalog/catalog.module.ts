import { Module } from '@nestjs/common';
import type { RedisConnection } from '@switchyard/contracts';
import { AuthModule } from '../auth/auth.module.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, REDIS } from '../runtime/tokens.ts';
import { CatalogController } from './catalog.controller.ts';
import { CatalogReader } from './catalog-reader.ts';
import { ModelToolCatalog } from './model-tool-catalog.ts';

@Module({
  imports: [AuthModule],
  controllers: [CatalogController],
  providers: [
    {
      provide: CatalogReader,
      inject: [REDIS, ENV],
      useFactory: (redis: RedisConnection, env: OrchestratorEnv) => new CatalogReader(redis, env.prefix),
    },
    ModelToolCatalog,
  ],
  exports: [CatalogReader, ModelToolCatalog],
})
export class CatalogModule {}
