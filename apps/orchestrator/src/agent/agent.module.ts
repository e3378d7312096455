import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { DispatchModule } from '../dispatch/dispatch.module.ts';
import { JobsModule } from '../jobs/jobs.module.ts';
import { AgentRunConsumer } from './runs/agent-run-consumer.ts';
import { AgentRunner } from './runs/agent-runner.ts';
import { CheckpointModule } from './runs/checkpoint.module.ts';
import { ToolCallExecutor } from './tools/tool-call-executor.ts';

@Module({
  imports: [AuthModule, CatalogModule, DispatchModule, JobsModule, CheckpointModule],
  providers: [ToolCallExecutor, AgentRunner, AgentRunConsumer],
  exports: [AgentRunner],
})
export class AgentModule {}
