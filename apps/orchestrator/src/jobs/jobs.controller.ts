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
import { CurrentViewer, type Viewer, ViewerGuard } from '../auth/viewer.guard.ts';
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

/** The slot bucket of operators' event streams; not a team name (those are config keys, never parenthesised). */
const OPERATOR_STREAMS = '(operators)';

export const IdempotencyKeySchema = z.string().min(1).max(200).optional();

/**
 * The jobs API; its OpenAPI description (http/openapi-document.ts) uses the same schemas. Reading
 * (ViewerGuard) takes a team's key, which sees its own jobs, or an operator's, which sees every team's;
 * everything that acts on a job (ApiKeyGuard) takes the team's own key, an operator's is a 403.
 */
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
  @UseGuards(ViewerGuard)
  async list(@CurrentViewer() viewer: Viewer, @Query() query: Record<string, unknown>) {
    return this.jobs.list(viewer, parseListQuery(query));
  }

  @Post()
  @UseGuards(ApiKeyGuard)
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
    await this.dependencies.requireAll();
    const { view, created } = await this.jobs.submit(team, body, key);
    response.status(created ? 201 : 200);
    return view;
  }

  @Get(':id')
  @UseGuards(ViewerGuard)
  async get(
    @CurrentViewer() viewer: Viewer,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.get(viewer, id);
  }

  @Get(':id/events')
  @UseGuards(ViewerGuard)
  @WithoutDependencyTimeout()
  async stream(
    @CurrentViewer() viewer: Viewer,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    await this.jobs.readable(viewer, id);
    // Operators' streams count apart: watching a team's job must not use up that team's slots.
    const holder = viewer.kind === 'team' ? `team ${viewer.team.name}` : 'operator keys';
    const release = this.streamSlots.take(viewer.kind === 'team' ? viewer.team.name : OPERATOR_STREAMS);
    if (!release) {
      throw new ProblemException(
        'too-many-requests',
        `orchestrator.maxEventStreamsPerTeam event streams are already open here for ${holder}; close one or try again later`,
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
  @UseGuards(ApiKeyGuard)
  @HttpCode(200)
  async cancel(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.cancel(team, id);
  }

  @Delete(':id')
  @UseGuards(ApiKeyGuard)
  @HttpCode(204)
  async delete(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ): Promise<void> {
    await this.dependencies.require(['postgres']);
    await this.jobs.delete(team, id);
  }
}
