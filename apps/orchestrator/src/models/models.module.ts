import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { ModelsController } from './models.controller.ts';
import { TeamModelsRegistry } from './team-models-registry.ts';

@Module({
  imports: [AuthModule],
  controllers: [ModelsController],
  providers: [TeamModelsRegistry],
  exports: [TeamModelsRegistry],
})
export class ModelsModule {}
