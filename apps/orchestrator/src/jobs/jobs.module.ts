import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.ts';
import { CatalogModule } from '../catalog/catalog.module.ts';
import { CheckpointModule } from '../checkpoints/checkpoint.module.ts';
import { ModelsModule } from '../models/models.module.ts';
import { AgentRunQueue } from './agent-run-queue.ts';
import { InputStore } from './input-store.ts';
import { JobDeletion } from './job-deletion.ts';
import { JobEndings } from './job-endings.ts';
import { JobEvents } from './job-events.ts';
import { JobRetention } from './job-retention.ts';
import { JobStore } from './job-store.ts';
import { JobsController } from './jobs.controller.ts';
import { JobsService } from './jobs.service.ts';
import { QueueEpochs } from './queue-epochs.ts';

@Module({
  imports: [AuthModule, CatalogModule, CheckpointModule, ModelsModule],
  controllers: [JobsController],
  providers: [
    JobStore,
    InputStore,
    JobEvents,
    JobEndings,
    AgentRunQueue,
    JobsService,
    JobDeletion,
    JobRetention,
    QueueEpochs,
  ],
  exports: [JobStore, InputStore, JobEvents, JobEndings, AgentRunQueue, JobsService, QueueEpochs],
})
export class JobsModule {}
