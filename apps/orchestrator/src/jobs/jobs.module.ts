import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CheckpointModule } from '../checkpoints/checkpoint.module.ts';
import { AgentRunQueue } from './agent-run-queue.ts';
import { JobEvents } from './job-events.ts';
import { JobStore } from './job-store.ts';
import { JobsController } from './jobs.controller.ts';
import { JobsService } from './jobs.service.ts';

@Module({
  imports: [AuthModule, CheckpointModule],
  controllers: [JobsController],
  providers: [JobStore, JobEvents, AgentRunQueue, JobsService],
  exports: [JobStore, JobEvents, AgentRunQueue],
})
export class JobsModule {}
