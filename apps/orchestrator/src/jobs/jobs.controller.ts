import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { ZodValidationPipe } from '../http/zod-validation.pipe.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
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
  constructor(
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  @Post()
  @ApiBody({ schema: z.toJSONSchema(JobRequestSchema, { io: 'input', unrepresentable: 'any' }) as object })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key, same team: the same job' })
  @ApiResponse({ status: 201, description: 'The job, queued' })
  @ApiResponse({ status: 200, description: 'The job submitted earlier with this Idempotency-Key' })
  async submit(
    @CurrentTeam() team: Team,
    @Body(new ZodValidationPipe(JobRequestSchema, 'job request')) body: JobRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
    const key = new ZodValidationPipe(IdempotencyKeySchema, 'Idempotency-Key header').transform(
      idempotencyKey,
    );
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
