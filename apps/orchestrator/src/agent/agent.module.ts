import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { CheckpointModule } from '../checkpoints/checkpoint.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { ModelsModule } from '../models/models.module.ts';
import { ToolCallsModule } from '../tool-calls/tool-calls.module.ts';
import { AgentRunConsumer } from './runs/agent-run-consumer.ts';
import { JobRunner } from './runs/job-runner.ts';

@Module({
  imports: [
    AuthModule,
    CatalogModule,
    DispatchModule,
    JobsModule,
    CheckpointModule,
    ToolCallsModule,
    ModelsModule,
  ],
  providers: [JobRunner, AgentRunConsumer],
  exports: [JobRunner],
})
export class AgentModule {}
