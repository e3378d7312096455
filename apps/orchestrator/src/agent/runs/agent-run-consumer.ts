import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AGENT_RUNS_QUEUE, type SwitchyardConfig } from '@switchyard/contracts';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AgentRunData } from '../../jobs/agent-run-queue.ts';
import { isDependencyOutage } from '../../runtime/dependency-errors.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { OrchestratorEnv } from '../../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, REDIS } from '../../runtime/tokens.ts';
import { JobRunner } from './job-runner.ts';
import { BullRunLease } from './run-lease.ts';

/**
 * A run interrupted by PostgreSQL or Redis being unreachable is put back to wait this long, as often
 * as it takes: an outage is not the run's failure and uses none of its attempts, so a run outlasts a
 * database restart of any length and continues by itself afterwards.
 */
const OUTAGE_RETRY_MS = 2_000;

/**
 * This replica's consumer of the `agent-runs` queue. Every replica runs one, so runs spread over the
 * replicas, and a run whose replica dies (lock not renewed) is handed to another by BullMQ's stalled
 * check.
 */
@Injectable()
export class AgentRunConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private worker: Worker<AgentRunData> | undefined;

  constructor(
    @Inject(JobRunner) private readonly runner: JobRunner,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  /** Starts consuming only once the whole app (HTTP included) is up. */
  onApplicationBootstrap(): void {
    const settings = this.config.orchestrator;
    this.worker = new Worker<AgentRunData>(
      AGENT_RUNS_QUEUE,
      // BullMQ passes a signal only to a processor that takes three parameters. It aborts only when
      // the lock is lost (below): a hand-over, which the runner must not mistake for a cancel.
      (job, token, signal) => this.process(job, token, signal),
      {
        connection: this.redis,
        prefix: this.env.prefix,
        name: this.env.replicaId,
        concurrency: settings.agentRunConcurrency,
        lockDuration: settings.lockDurationMs,
        stalledInterval: settings.stalledIntervalMs,
        maxStalledCount: 10,
      },
    );
    // finishedOn is set only when BullMQ failed the run for good: out of attempts, or unrecoverable
    // (stalled more than maxStalledCount times), which happens with attempts left.
    this.worker.on('failed', (job, error) => {
      if (job?.finishedOn === undefined) return;
      // Unhandled, a rejection here (PostgreSQL down) would end the process; a failed write leaves the
      // job `running` in PostgreSQL, so say so loudly, with the job.
      this.runner
        .giveUp(job.data.jobId, error.message)
        .catch((failure: unknown) =>
          this.log.error({ job_id: job.data.jobId, err: failure }, 'could not mark a failed run as failed'),
        );
    });
    this.worker.on('error', (error) => this.log.error({ err: error }, 'agent-runs worker error'));
    // A lock that could not be renewed (e.g. Redis was down past lockDurationMs) may already belong to
    // another replica: stop the run here rather than run it twice at once.
    this.worker.on('lockRenewalFailed', (jobIds) => {
      for (const jobId of jobIds) {
        this.log.warn({ job_id: jobId }, 'lost the lock of a run; stopping it here');
        this.worker?.cancelJob(jobId, 'lock lost');
      }
    });
  }

  private async process(job: Job<AgentRunData>, token: string | undefined, signal?: AbortSignal) {
    const lease = new BullRunLease(job, token, this.config.orchestrator.lockDurationMs, signal, (error) =>
      this.log.warn({ job_id: job.id, err: error }, 'could not confirm the lock of a run'),
    );
    try {
      await this.runner.run(job.data.jobId, this.env.replicaId, lease);
    } catch (error) {
      // A lost lease is a hand-over: the run is no longer ours to put back.
      if (lease.signal.aborted || !token || !isDependencyOutage(error)) throw error;
      this.log.warn(
        { job_id: job.data.jobId, err: error, retry_in_ms: OUTAGE_RETRY_MS },
        'run interrupted by a dependency outage; it waits and resumes without using an attempt',
      );
      await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS, token);
      throw new DelayedError();
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }
}
