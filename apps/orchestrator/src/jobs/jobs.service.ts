import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { Team } from '../auth/teams.service.ts';
import type { Viewer } from '../auth/viewer.guard.ts';
import { ModelToolCatalog } from '../catalog/model-tool-catalog.ts';
import { unknownTools } from '../catalog/unknown-tools.ts';
import { TranscriptReader } from '../checkpoints/transcript-reader.ts';
import { ProblemException } from '../http/problem.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import { ModelConfigError, modelSettings, TeamModelsRegistry } from '../models/index.ts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER } from '../runtime/tokens.ts';
import { AgentRunQueue } from './agent-run-queue.ts';
import { InputStore } from './input-store.ts';
import { JobDeletion } from './job-deletion.ts';
import { JobEvents } from './job-events.ts';
import { encodeCursor, type JobListFilter, type JobListSchema } from './job-list-query.ts';
import { FINAL_STATUSES, type JobRequest } from './job-request.ts';
import { ConcurrencyLimitError, type JobRecord, JobStore } from './job-store.ts';
import { type JobView, jobSummary, jobView } from './job-view.ts';
import { requestDigest } from './request-digest.ts';
import { jobTraceContext } from './trace-context.ts';

/** A job as the API returns it; agent jobs add their conversation. */
export type JobResponse = JobView;

/** Submitting, reading and cancelling jobs on behalf of a team. */
@Injectable()
export class JobsService {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(AgentRunQueue) private readonly runs: AgentRunQueue,
    @Inject(TranscriptReader) private readonly transcripts: TranscriptReader,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(JobDeletion) private readonly deletion: JobDeletion,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(TeamModelsRegistry) private readonly models: TeamModelsRegistry,
  ) {}

  async submit(
    team: Team,
    request: JobRequest,
    idempotencyKey?: string,
  ): Promise<{ view: JobResponse; created: boolean }> {
    if (request.webhook && !team.config.webhookSecret) {
      throw new ProblemException(
        'validation-failed',
        `webhook: team ${team.name} has no webhookSecret to sign it with (teams.${team.name}.webhookSecret)`,
        { errors: [{ path: 'webhook', message: `team ${team.name} has no webhookSecret` }] },
      );
    }
    // Digest of what the client sent, before the deployment's default model is filled in.
    const digest = requestDigest(request);
    const resolved = this.withModel(team, request);
    await this.refuseUnknownTools(team, resolved);
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
          requestDigest: digest,
        },
        team.config.maxConcurrentJobs,
      );
    } catch (error) {
      if (error instanceof ConcurrencyLimitError) {
        this.metrics.quotaRejected(team.name, 'maxConcurrentJobs');
        throw new ProblemException('too-many-requests', error.message);
      }
      throw error;
    }
    const { job, created } = outcome;
    // The IETF Idempotency-Key draft: the same key with another request is the client's mistake.
    if (!created && job.requestDigest !== null && job.requestDigest !== digest) {
      throw new ProblemException(
        'idempotency-key-reused',
        `Idempotency-Key ${idempotencyKey} was used for job ${job.id} with a different request body; use a new key for a new job`,
        { jobId: job.id },
      );
    }
    // Announced before its run is queued: a run that starts at once must not announce `running` first.
    if (created) await this.events.publish(job.id, 'status', { status: 'queued' });
    if (created || job.status === 'queued') {
      // Also on a replay: a job whose first enqueue was lost gets its run now (BullMQ dedupes by id).
      try {
        await this.runs.enqueue(job.id);
      } catch (error) {
        // The job is recorded: PostgreSQL is the record and the reconciler queues the run of every open
        // job whose queue entry is missing (reconcile/run-reconciler.ts). Failing it here, or answering
        // 503, would turn a queue-store blip into a lost job or, on the client's retry, a second one.
        this.log.warn(
          { job_id: job.id, trace_id: job.traceId, err: error },
          'run not queued yet: the queue store did not answer; the reconciler queues it from PostgreSQL',
        );
      }
    }
    if (created) {
      this.metrics.jobSubmitted(job.kind, team.name);
      this.log.info(
        { job_id: job.id, trace_id: job.traceId, team: team.name, kind: job.kind },
        'job submitted',
      );
    }
    return { view: await this.view(job), created };
  }

  async get(viewer: Viewer, id: string): Promise<JobResponse> {
    return this.view(await this.readable(viewer, id));
  }

  /** A job the viewer may read: an operator any, a team its own (another team's job is a 404). */
  async readable(viewer: Viewer, id: string): Promise<JobRecord> {
    if (viewer.kind === 'team') return this.owned(viewer.team, id);
    const job = await this.store.get(id);
    if (!job) throw new ProblemException('not-found', `no job ${id}`);
    return job;
  }

  async owned(team: Team, id: string): Promise<JobRecord> {
    const job = await this.store.getForTeam(id, team.name);
    if (!job) throw new ProblemException('not-found', `no job ${id}`);
    return job;
  }

  async cancel(team: Team, id: string): Promise<JobResponse> {
    const job = await this.owned(team, id);
    if (FINAL_STATUSES.has(job.status))
      throw new ProblemException('conflict', `job ${id} already ${job.status}`, { jobStatus: job.status });
    if (
      await this.events.publishWith(id, 'status', { status: 'cancelled' }, (event) =>
        this.store.cancel(id, event),
      )
    ) {
      // Counted here, where the status changes, whether or not a replica was running the job.
      this.metrics.jobEnded(job, 'cancelled');
      // A parked run waits as a delayed job: removed here; what it waited for a person on is moot.
      await this.runs.removeIfWaiting(id);
      await this.inputs.expireAll(id);
      // The replica running it (maybe another one) stops the run and drops its queued tool calls.
      await this.events.announceCancel(id);
      this.log.info({ job_id: id, trace_id: job.traceId }, 'job cancelled');
    }
    return this.get({ kind: 'team', team }, id);
  }

  /**
   * One page of jobs, newest first; `nextCursor` is null on the last page. A team sees its own jobs
   * (naming another team is a 403); an operator every team's, or `filter.team`'s.
   */
  async list(viewer: Viewer, filter: JobListFilter): Promise<z.output<typeof JobListSchema>> {
    if (viewer.kind === 'team' && filter.team !== undefined && filter.team !== viewer.team.name)
      throw new ProblemException(
        'forbidden',
        `team: a team's key lists only its own jobs (team ${viewer.team.name}); another team's need an operator key`,
      );
    const rows = await this.store.list(viewer.kind === 'team' ? viewer.team.name : filter.team, filter);
    const page = rows.slice(0, filter.limit);
    const last = page.at(-1);
    return {
      jobs: page.map((job) => jobSummary(job, this.env.jaegerUiUrl)),
      nextCursor:
        rows.length > filter.limit && last ? encodeCursor({ createdAt: last.cursorAt, id: last.id }) : null,
    };
  }

  /** Deletes an ended job and everything kept of it; a job still queued or running must be cancelled first. */
  async delete(team: Team, id: string): Promise<void> {
    const result = await this.deletion.deleteOne(id, team.name);
    if (result === undefined) throw new ProblemException('not-found', `no job ${id}`);
    if (result !== 'deleted')
      throw new ProblemException(
        'conflict',
        `job ${id} is ${result}; cancel it (POST /v1/jobs/${id}/cancel) before deleting it`,
        { jobStatus: result },
      );
    this.log.info({ job_id: id, team: team.name }, 'job deleted');
  }

  private async view(job: JobRecord): Promise<JobResponse> {
    const [toolCalls, messages, inputs] = await Promise.all([
      this.store.toolCalls(job.id),
      job.kind === 'agent' ? this.transcripts.read(job.id) : undefined,
      this.inputs.forJob(job.id),
    ]);
    return jobView(job, toolCalls, messages, this.env.jaegerUiUrl, inputs);
  }

  /** A batch naming a tool this team cannot call is refused whole, with the closest names it can. */
  private async refuseUnknownTools(team: Team, request: JobRequest): Promise<void> {
    if (request.kind !== 'batch') return;
    const unknown = await unknownTools(
      this.catalog,
      request.calls.map((call) => call.tool),
      [team.config.tools],
    );
    if (unknown.length === 0) return;
    const described = unknown.map(({ name, suggestions }) =>
      suggestions.length > 0 ? `${name} (did you mean ${suggestions.join(' or ')}?)` : name,
    );
    // One answer for a name that is not in the catalog and for one the team's filters leave out: a team
    // sees only the tools its filters allow (docs/semantics.md §7, §9), so a refusal must not tell it
    // which other tools exist.
    throw new ProblemException(
      'unknown-tools',
      `not in this team's catalog (unknown, or not allowed by its filters): ${described.join('; ')}`,
      { unknownTools: unknown },
    );
  }

  /**
   * An agent job without a model gets its team's default (else the deployment's); a model the team may
   * not use, or that cannot be built with its keys, is a 400 saying why (never a failure at run time).
   */
  private withModel(team: Team, request: JobRequest): JobRequest {
    if (request.kind !== 'agent') return request;
    const access = this.models.forTeam(team.name);
    const model = request.model ?? access.defaultModel;
    if (!model) {
      throw new ProblemException('validation-failed', `model: required (${access.noDefaultHint})`, {
        errors: [{ path: 'model', message: `required (${access.noDefaultHint})` }],
      });
    }
    try {
      // The settings only: the provider's package is loaded by the run that uses it.
      modelSettings(model, access);
    } catch (error) {
      if (error instanceof ModelConfigError)
        throw new ProblemException('validation-failed', `model: ${error.message}`, {
          errors: [{ path: 'model', message: error.message }],
        });
      throw error;
    }
    return { ...request, model };
  }
}
