import { randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ConflictException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { Team } from '../auth/teams.service.ts';
import { type TranscriptMessage, TranscriptReader } from '../checkpoints/transcript-reader.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import { createChatModel, defaultModelSpecFromEnv, ModelConfigError } from '../models/index.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER } from '../runtime/tokens.ts';
import { AgentRunQueue } from './agent-run-queue.ts';
import { JobEvents } from './job-events.ts';
import { FINAL_STATUSES, type JobRequest } from './job-request.ts';
import { ConcurrencyLimitError, type JobRecord, JobStore } from './job-store.ts';
import { jobView } from './job-view.ts';
import { jobTraceContext } from './trace-context.ts';

/** A job as the API returns it; agent jobs add their conversation. */
export type JobResponse = ReturnType<typeof jobView> & { messages?: TranscriptMessage[] };

/** Submitting, reading and cancelling jobs on behalf of a team. */
@Injectable()
export class JobsService {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(AgentRunQueue) private readonly runs: AgentRunQueue,
    @Inject(TranscriptReader) private readonly transcripts: TranscriptReader,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async submit(
    team: Team,
    request: JobRequest,
    idempotencyKey?: string,
  ): Promise<{ view: JobResponse; created: boolean }> {
    const resolved = this.withModel(request);
    const trace = jobTraceContext();
    let outcome: { job: JobRecord; created: boolean };
    try {
      outcome = await this.store.create(
        {
          id: `job_${randomUUID()}`,
          team: team.name,
          kind: resolved.kind,
          request: resolved,
          traceId: trace.traceId,
          traceparent: trace.traceparent,
          idempotencyKey: idempotencyKey ?? null,
        },
        team.config.maxConcurrentJobs,
      );
    } catch (error) {
      if (error instanceof ConcurrencyLimitError)
        throw new HttpException(error.message, HttpStatus.TOO_MANY_REQUESTS);
      throw error;
    }
    const { job, created } = outcome;
    if (created || job.status === 'queued') {
      // Also on a replay: a job whose first enqueue was lost gets its run now (BullMQ dedupes by id).
      try {
        await this.runs.enqueue(job.id);
      } catch (error) {
        this.log.error({ job_id: job.id, trace_id: job.traceId, err: error }, 'could not enqueue agent run');
        await this.store.finish(job.id, 'failed', undefined, 'could not be queued: Redis unavailable');
        throw new ServiceUnavailableException('the job could not be queued; try again');
      }
    }
    if (created) {
      this.metrics.jobSubmitted(job.kind);
      await this.events.publish(job.id, 'status', { status: 'queued' });
      this.log.info(
        { job_id: job.id, trace_id: job.traceId, team: team.name, kind: job.kind },
        'job submitted',
      );
    }
    return { view: await this.view(job), created };
  }

  async get(team: Team, id: string): Promise<JobResponse> {
    return this.view(await this.owned(team, id));
  }

  async owned(team: Team, id: string): Promise<JobRecord> {
    const job = await this.store.getForTeam(id, team.name);
    if (!job) throw new NotFoundException(`no job ${id}`);
    return job;
  }

  async cancel(team: Team, id: string): Promise<JobResponse> {
    const job = await this.owned(team, id);
    if (FINAL_STATUSES.has(job.status)) throw new ConflictException(`job ${id} already ${job.status}`);
    if (await this.store.cancel(id)) {
      await this.runs.removeIfWaiting(id);
      await this.events.publish(id, 'status', { status: 'cancelled' });
      // The replica running it (maybe another one) stops the run and drops its queued tool calls.
      await this.events.announceCancel(id);
      this.log.info({ job_id: id, trace_id: job.traceId }, 'job cancelled');
    }
    return this.get(team, id);
  }

  private async view(job: JobRecord): Promise<JobResponse> {
    const [toolCalls, messages] = await Promise.all([
      this.store.toolCalls(job.id),
      job.kind === 'agent' ? this.transcripts.read(job.id) : undefined,
    ]);
    return { ...jobView(job, toolCalls, this.env.jaegerUiUrl), ...(messages ? { messages } : {}) };
  }

  /** An agent job without a model gets the deployment's default; a model that cannot be built is a 400. */
  private withModel(request: JobRequest): JobRequest {
    if (request.kind !== 'agent') return request;
    const model = request.model ?? defaultModelSpecFromEnv();
    if (!model) {
      throw new BadRequestException(
        'model: required (this deployment has no default model; set SWITCHYARD_MODEL_PROVIDER and SWITCHYARD_MODEL_NAME)',
      );
    }
    try {
      createChatModel(model);
    } catch (error) {
      if (error instanceof ModelConfigError) throw new BadRequestException(`model: ${error.message}`);
      throw error;
    }
    return { ...request, model };
  }
}
