import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { SwitchyardConfig } from '@switchyard/contracts';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { ZodValidationPipe } from '../http/zod-validation.pipe.ts';
import { DependencyHealth } from '../runtime/dependency-health.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { EventStreamSlots } from './event-stream-slots.ts';
import { streamJobEvents } from './job-event-stream.ts';
import { JobEvents } from './job-events.ts';
import { type JobRequest, JobRequestSchema } from './job-request.ts';
import { JobStore } from './job-store.ts';
import { JobsService } from './jobs.service.ts';

const JobIdSchema = z.string().regex(/^job_[0-9a-f-]{36}$/, 'not a job id');
const IdempotencyKeySchema = z.string().min(1).max(200).optional();

@ApiTags('jobs')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/jobs')
export class JobsController {
  private readonly streamSlots: EventStreamSlots;

  constructor(
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(DependencyHealth) private readonly dependencies: DependencyHealth,
    @Inject(CONFIG) config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.streamSlots = new EventStreamSlots(config.orchestrator.maxEventStreamsPerTeam);
  }

  @Post()
  @ApiBody({ schema: z.toJSONSchema(JobRequestSchema, { io: 'input', unrepresentable: 'any' }) as object })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key, same team: the same job' })
  @ApiResponse({ status: 201, description: 'The job, queued' })
  @ApiResponse({ status: 200, description: 'The job submitted earlier with this Idempotency-Key' })
  @ApiResponse({ status: 429, description: "The team's maxConcurrentJobs are running; see Retry-After" })
  @ApiResponse({ status: 503, description: 'PostgreSQL or Redis is unavailable; see Retry-After' })
  async submit(
    @CurrentTeam() team: Team,
    @Body(new ZodValidationPipe(JobRequestSchema, 'job request')) body: JobRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
    const key = new ZodValidationPipe(IdempotencyKeySchema, 'Idempotency-Key header').transform(
      idempotencyKey,
    );
    // Checked first, so that an outage refuses the job before it is half created (stored, not queued).
    await this.dependencies.require(['postgres', 'redis']);
    const { view, created } = await this.jobs.submit(team, body, key);
    response.status(created ? 201 : 200);
    return view;
  }

  @Get(':id')
  @ApiResponse({ status: 200, description: 'The job, its result and every tool call with its outcome' })
  @ApiResponse({ status: 404, description: 'No such job for this team' })
  async get(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.get(team, id);
  }

  @Get(':id/events')
  @WithoutDependencyTimeout()
  @ApiResponse({ status: 429, description: "The team's maxEventStreamsPerTeam streams are open" })
  @ApiResponse({
    status: 200,
    description: 'Server-sent events: status, step, tool_call.dispatched, tool_call.finished',
  })
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
      throw new HttpException(
        `team ${team.name} already has orchestrator.maxEventStreamsPerTeam event streams open here; close one or try again later`,
        HttpStatus.TOO_MANY_REQUESTS,
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
  @ApiResponse({ status: 200, description: 'The job, cancelled' })
  @ApiResponse({ status: 409, description: 'The job had already ended' })
  async cancel(
    @CurrentTeam() team: Team,
    @Param('id', new ZodValidationPipe(JobIdSchema, 'job id')) id: string,
  ) {
    return this.jobs.cancel(team, id);
  }
}
