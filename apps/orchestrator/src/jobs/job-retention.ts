import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { RedisConnection, SwitchyardConfig } from '@switchyard/contracts';
import { Queue, Worker } from 'bullmq';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, REDIS } from '../runtime/tokens.ts';
import { JobDeletion } from './job-deletion.ts';
import { JobStore } from './job-store.ts';

export const JOB_RETENTION_QUEUE = '{job-retention}';
const SCHEDULER_ID = 'delete-expired-jobs';
/** Jobs deleted per round of a sweep, so one sweep never holds a huge transaction. */
const SWEEP_BATCH = 200;
const DAY_MS = 24 * 3_600_000;
/**
 * How often a replica checks that the scheduler still exists (at most; sooner when sweeps are more
 * frequent): a Redis that lost its data forgets it, and then no sweep would run until a replica restarts.
 */
const SCHEDULER_CHECK_MAX_MS = 60_000;

/**
 * Enforces orchestrator.jobRetentionDays: a BullMQ job scheduler (one per deployment, whichever
 * replica upserts it last wins with the same settings) adds a sweep every retentionSweepMs, and one
 * replica's worker deletes the jobs that ended longer ago than the retention period.
 */
@Injectable()
export class JobRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  /** One check at a time: while Redis is down a check waits, and the next rounds skip theirs. */
  private checking = false;
  private readonly onReady = () => void this.ensureScheduler();

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobDeletion) private readonly deletion: JobDeletion,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { retentionSweepMs } = this.config.orchestrator;
    const options = { connection: this.redis, prefix: this.env.prefix };
    this.queue = new Queue(JOB_RETENTION_QUEUE, options);
    this.worker = new Worker(JOB_RETENTION_QUEUE, () => this.sweep(), { ...options, concurrency: 1 });
    this.worker.on('error', (error) => this.log.error({ err: error }, 'job-retention worker error'));
    this.worker.on('failed', (_job, error) =>
      this.log.warn({ err: error }, 'a job-retention sweep failed; the next one tries again'),
    );
    // A Redis that is down at start-up must not keep the replica from serving: the periodic check, or
    // the scheduler another replica upserted, keeps the sweeps going.
    await this.upsertScheduler(this.queue).catch((error: unknown) =>
      this.log.warn({ err: error }, 'could not schedule job-retention sweeps'),
    );
    // Re-asserted like everything else set once in Redis (docs/operations.md, "When Redis loses its data").
    this.redis.on('ready', this.onReady);
    this.checkTimer = setInterval(
      () => void this.ensureScheduler(),
      Math.min(retentionSweepMs, SCHEDULER_CHECK_MAX_MS),
    );
    this.checkTimer.unref();
  }

  private upsertScheduler(queue: Queue): Promise<unknown> {
    return queue.upsertJobScheduler(
      SCHEDULER_ID,
      { every: this.config.orchestrator.retentionSweepMs },
      { name: 'sweep', opts: { removeOnComplete: 10, removeOnFail: 10 } },
    );
  }

  /** Upserts the scheduler again when Redis no longer has it (one read when it does). */
  async ensureScheduler(): Promise<void> {
    if (this.checking || !this.queue) return;
    this.checking = true;
    try {
      if (await this.queue.getJobScheduler(SCHEDULER_ID)) return;
      await this.upsertScheduler(this.queue);
      this.log.warn(
        { scheduler: SCHEDULER_ID, every_ms: this.config.orchestrator.retentionSweepMs },
        'job-retention scheduler missing (Redis lost its data?): scheduled again',
      );
    } catch (error) {
      this.log.warn({ err: error }, 'could not check the job-retention scheduler; checked again later');
    } finally {
      this.checking = false;
    }
  }

  /** Deletes every job that ended before now − jobRetentionDays; returns how many. */
  async sweep(): Promise<number> {
    const cutoff = new Date(Date.now() - this.config.orchestrator.jobRetentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const ids = await this.store.endedBefore(cutoff, SWEEP_BATCH);
      if (ids.length === 0) break;
      const deleted = await this.deletion.deleteEnded(ids);
      total += deleted;
      if (deleted === 0 || ids.length < SWEEP_BATCH) break;
    }
    if (total > 0) this.log.info({ deleted: total, cutoff: cutoff.toISOString() }, 'deleted expired jobs');
    return total;
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.checkTimer);
    this.redis.off('ready', this.onReady);
    await this.worker?.close();
    await this.queue?.close();
  }
}
