import { Controller, Get, Inject, Param, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { ProblemException } from '../http/problem.ts';
import { ZodValidationPipe } from '../http/zod-validation.pipe.ts';
import { JobIdSchema } from '../jobs/job-request.ts';
import { JobStore } from '../jobs/job-store.ts';
import { WebhookDeliveries } from './webhook-deliveries.ts';
import type { WebhookDeliveryList } from './webhook-delivery-view.ts';

@UseGuards(ApiKeyGuard)
@Controller('v1/jobs')
export class WebhooksController {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(WebhookDeliveries) private readonly deliveries: WebhookDeliveries,
  ) {}

  @Get(':id/webhooks')
  async list(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ): Promise<WebhookDeliveryList> {
    const job = await this.store.getForTeam(id, team.name);
    if (!job) throw new ProblemException('not-found', `no job ${id}`);
    return { jobId: id, deliveries: await this.deliveries.deliveries(job) };
  }
}
