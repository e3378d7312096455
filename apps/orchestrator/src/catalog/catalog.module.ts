import { Module } from '@nestjs/common';
import type { Store } from '@switchyard/contracts';
import { AuthModule } from '../auth/auth.module.ts';
import { STORE } from '../runtime/tokens.ts';
import { CatalogController } from './catalog.controller.ts';
import { CatalogReader } from './catalog-reader.ts';
import { ModelToolCatalog } from './model-tool-catalog.ts';

@Module({
  imports: [AuthModule],
  controllers: [CatalogController],
  providers: [
    {
      provide: CatalogReader,
      inject: [STORE],
      useFactory: (store: Store) => new CatalogReader(store),
    },
    ModelToolCatalog,
  ],
  exports: [CatalogReader, ModelToolCatalog],
})
export class CatalogModule {}
