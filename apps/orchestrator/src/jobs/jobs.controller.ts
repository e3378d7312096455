import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { type Cidr, parseAllowList } from '../egress/address-policy.ts';
import { refuseInternalWebhook } from '../egress/webhook-url-refusal.ts';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { ProblemException } from '../http/problem.ts';
import { ZodValidationPipe } from '../http/zod-validation.pipe.ts';
import { DependencyHealth } from '../runtime/dependency-health.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { refuseLongDeadline } from './deadline-cap.ts';
import { EventStreamSlots } from './event-stream-slots.ts';
import { streamJobEvents } from './job-event-stream.ts';
import { JobEvents } from './job-events.ts';
import { parseListQuery } from './job-list-query.ts';
import { JobIdSchema, type JobRequest, JobRequestSchema } from './job-request.ts';
import { JobStore } from './job-store.ts';
import { JobsService } from './jobs.service.ts';

export const IdempotencyKeySchema = z.string().min(1).max(200).optional();

/** The jobs API; its OpenAPI description (http/openapi-document.ts) uses the same schemas. */
@UseGuards(ApiKeyGuard)
@Controller('v1/jobs')
export class JobsController {
  private readonly streamSlots: EventStreamSlots;
  private readonly maxDeadlineMs: number;
  private readonly webhookAllow: Cidr[];

  constructor(
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(DependencyHealth) private readonly dependencies: DependencyHealth,
    @Inject(CONFIG) config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.streamSlots = new EventStreamSlots(config.orchestrator.maxEventStreamsPerTeam);
    this.maxDeadlineMs = config.orchestrator.maxDeadlineMs;
    this.webhookAllow = parseAllowList(config.orchestrator.webhooks.allowPrivateNetworks);
  }

  @Get()
  async list(@CurrentTeam() team: Team, @Query() query: Record<string, unknown>) {
    return this.jobs.list(team, parseListQuery(query));
  }

  @Post()
  async submit(
    @CurrentTeam() team: Team,
    @Body(new ZodValidationPipe(JobRequestSchema, 'job request', { body: true })) body: JobRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
    const key = new ZodValidationPipe(IdempotencyKeySchema, 'Idempotency-Key header').transform(
      idempotencyKey,
    );
    refuseLongDeadline(body, this.maxDeadlineMs);
    refuseInternalWebhook(body, this.webhookAllow);
    // Checked first, so that an outage refuses the job before it is half created (stored, not queued).
    await this.dependencies.require(['postgres', 'redis']);
    const { view, created } = await this.jobs.submit(team, body, key);
    response.status(created ? 201 : 200);
    return view;
  }

  @Get(':id')
  async get(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.get(team, id);
  }

  @Get(':id/events')
  @WithoutDependencyTimeout()
  async stream(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.jobs.owned(team, id);
    const release = this.streamSlots.take(team.name);
    if (!release) {
      throw new ProblemException(
        'too-many-requests',
        `team ${team.name} already has orchestrator.maxEventStreamsPerTeam event streams open here; close one or try again later`,
      );
    }
    // Released when the stream ends, whichever side ends it (the handler returns before that).
    response.on('close', release);
    // Event ids are bigserials; anything else (garbage, absurdly large) replays from the start.
    const after = /^\d{1,15}$/.test(lastEventId ?? '') ? Number(lastEventId) : 0;
    const deps = { store: this.store, events: this.events, log: this.log };
    await streamJobEvents(id, after, deps, request, response);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.cancel(team, id);
  }

  @Delete(':id')
  @HttpCode(204)
  async delete(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ): Promise<void> {
    await this.dependencies.require(['postgres']);
    await this.jobs.delete(team, id);
  }
}
