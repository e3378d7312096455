import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import {
  bullmqBinding,
  type ExpiredRowsHorizons,
  type Store,
  type SwitchyardConfig,
  sweepExpiredRows,
} from '@switchyard/contracts';
import { type Job, Queue, Worker } from 'bullmq';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER, STORE } from '../runtime/tokens.ts';
import { JobDeletion } from './job-deletion.ts';
import { JobStore } from './job-store.ts';

export const JOB_RETENTION_QUEUE = '{job-retention}';
const SCHEDULER_ID = 'delete-expired-jobs';
/**
 * On the postgres backend only: the queue-side tables' expired rows (docs/postgres-backend.md §2), swept
 * every minute. Redis expires its keys by itself.
 */
const EXPIRED_ROWS_SCHEDULER_ID = 'delete-expired-rows';
const EXPIRED_ROWS_JOB = 'expired-rows';
const EXPIRED_ROWS_EVERY_MS = 60_000;
/** The catalog reader's horizon for a dead worker's heartbeat (catalog-reader.ts). */
const HEARTBEAT_HORIZON_MS = 60_000;
/** adaptiveTimeouts.windowMs's default: the window when no server is configured. */
const DEFAULT_LATENCY_WINDOW_MS = 900_000;
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
 * replica's worker deletes the jobs that ended longer ago than the retention period. On the postgres
 * backend a second scheduler on the same queue sweeps the queue-side tables' expired rows every minute.
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
    @Inject(STORE) private readonly queueStore: Store,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { retentionSweepMs } = this.config.orchestrator;
    const binding = bullmqBinding(this.queueStore);
    this.queue = new Queue(JOB_RETENTION_QUEUE, binding.options, binding.factory as never);
    this.worker = new Worker(
      JOB_RETENTION_QUEUE,
      (job: Job) => (job.name === EXPIRED_ROWS_JOB ? this.sweepExpiredRows() : this.sweep()),
      { ...binding.options, concurrency: 1 },
      binding.factory as never,
    );
    this.worker.on('error', (error) => this.log.error({ err: error }, 'job-retention worker error'));
    this.worker.on('failed', (_job, error) =>
      this.log.warn({ err: error }, 'a job-retention sweep failed; the next one tries again'),
    );
    // A Redis that is down at start-up must not keep the replica from serving: the periodic check, or
    // the scheduler another replica upserted, keeps the sweeps going.
    await this.upsertSchedulers(this.queue).catch((error: unknown) =>
      this.log.warn({ err: error }, 'could not schedule job-retention sweeps'),
    );
    // Re-asserted like everything else set once in Redis (docs/operations.md, "When Redis loses its data").
    // On PostgreSQL the scheduler lives in the database the job store lives in: nothing to re-assert.
    if (this.queueStore.kind === 'redis') this.queueStore.redis.on('ready', this.onReady);
    this.checkTimer = setInterval(
      () => void this.ensureScheduler(),
      Math.min(retentionSweepMs, SCHEDULER_CHECK_MAX_MS),
    );
    this.checkTimer.unref();
  }

  /** Each scheduler this backend needs: its id, how often it adds a sweep, and how to upsert it. */
  private schedulers(queue: Queue): Array<{ id: string; everyMs: number; upsert: () => Promise<unknown> }> {
    const scheduler = (id: string, everyMs: number, name: string) => ({
      id,
      everyMs,
      upsert: () =>
        queue.upsertJobScheduler(
          id,
          { every: everyMs },
          { name, opts: { removeOnComplete: 10, removeOnFail: 10 } },
        ),
    });
    const jobs = scheduler(SCHEDULER_ID, this.config.orchestrator.retentionSweepMs, 'sweep');
    if (this.queueStore.kind !== 'postgres') return [jobs];
    return [jobs, scheduler(EXPIRED_ROWS_SCHEDULER_ID, EXPIRED_ROWS_EVERY_MS, EXPIRED_ROWS_JOB)];
  }

  private async upsertSchedulers(queue: Queue): Promise<void> {
    for (const scheduler of this.schedulers(queue)) await scheduler.upsert();
  }

  /** Upserts a scheduler again when the store no longer has it (one read each when it does). */
  async ensureScheduler(): Promise<void> {
    if (this.checking || !this.queue) return;
    this.checking = true;
    try {
      for (const scheduler of this.schedulers(this.queue)) {
        if (await this.queue.getJobScheduler(scheduler.id)) continue;
        await scheduler.upsert();
        this.log.warn(
          { scheduler: scheduler.id, every_ms: scheduler.everyMs },
          'job-retention scheduler missing (Redis lost its data?): scheduled again',
        );
      }
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

  /**
   * Deletes the queue-side tables' expired rows (postgres backend; nothing on Redis, whose keys expire
   * by themselves); returns how many rows of each table.
   */
  async sweepExpiredRows(): Promise<Record<string, number>> {
    if (this.queueStore.kind !== 'postgres') return {};
    const deleted = await sweepExpiredRows(this.queueStore, this.expiredRowsHorizons());
    if (Object.values(deleted).some((count) => count > 0)) {
      this.log.debug({ deleted }, 'deleted expired queue-side rows');
    }
    return deleted;
  }

  private expiredRowsHorizons(): ExpiredRowsHorizons {
    const windows = Object.values(this.config.servers).map((server) => server.adaptiveTimeouts.windowMs);
    return {
      heartbeatMs: HEARTBEAT_HORIZON_MS,
      latencyWindowMs: windows.length > 0 ? Math.max(...windows) : DEFAULT_LATENCY_WINDOW_MS,
    };
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.checkTimer);
    if (this.queueStore.kind === 'redis') this.queueStore.redis.off('ready', this.onReady);
    await this.worker?.close();
    await this.queue?.close();
  }
}
