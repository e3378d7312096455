import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Store, SwitchyardConfig } from '@switchyard/contracts';
import { JobRunner } from '../agent/runs/job-runner.ts';
import { AgentRunQueue } from '../jobs/agent-run-queue.ts';
import { QueueEpochs, RUNS_SLOT } from '../jobs/queue-epochs.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER, STORE } from '../runtime/tokens.ts';
import { type OpenRun, OpenRuns, type RunCursor } from './open-runs.ts';

/** Jobs looked at per page: a round reads one page, a sweep after a data loss reads every page. */
const PAGE = 200;
/**
 * A job younger than this may still be on its way into the queue (its submit's add in flight): left
 * alone, although adding it twice would be harmless (the same job id dedupes), to avoid the noise.
 */
const GRACE_SECONDS = 5;
/**
 * Rounds that sweep every page once the runs' epoch changed: the first finds most lost runs, the next
 * ones those a replica was still running when their entries vanished (they stop at their next lock
 * renewal, then have no entry either).
 */
const SWEEPS_AFTER_A_LOSS = 3;

/**
 * PostgreSQL is the record; the queues are rebuilt from it (docs/semantics.md §18; on the postgres
 * backend "the queue schema lost its data", docs/postgres-backend.md §4). Every replica, every
 * `orchestrator.reconcileEveryMs` and at once when Redis reconnects (Redis only: a reconnect to the
 * same PostgreSQL loses nothing), reads the queue epochs (a slot whose epoch changed lost its data) and
 * looks for open agent and batch jobs whose `{agent-runs}` entry is gone, and queues their runs again: the run resumes from its checkpoint and
 * answers settled calls from the record. Safe on every replica at once: the add uses the job's id, so
 * BullMQ keeps one entry however many replicas add it. One page per round, oldest first, continuing
 * where the last round stopped; every page, a few rounds running, after the runs' epoch changed.
 */
@Injectable()
export class RunReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private cursor: RunCursor | undefined;
  private fullSweepsLeft = 0;
  private current: Promise<unknown> | undefined;
  /** Asked for while a round ran: one more round follows it. */
  private again = false;
  private stopped = false;
  private readonly onReady = () => this.trigger();

  constructor(
    @Inject(OpenRuns) private readonly openRuns: OpenRuns,
    @Inject(AgentRunQueue) private readonly runs: AgentRunQueue,
    @Inject(QueueEpochs) private readonly epochs: QueueEpochs,
    @Inject(JobRunner) private readonly runner: JobRunner,
    @Inject(STORE) private readonly store: Store,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.trigger(), this.config.orchestrator.reconcileEveryMs);
    this.timer.unref();
    // A reconnect may be to a Redis that restarted empty: look at once, not a round later.
    if (this.store.kind === 'redis') this.store.redis.on('ready', this.onReady);
    // At start every epoch is new to this replica: the first round sweeps everything (queues that lost
    // their data while no replica ran are found here).
    this.trigger();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.store.kind === 'redis') this.store.redis.off('ready', this.onReady);
    await this.current;
  }

  /** Starts a round, unless one is under way: then one more follows it. */
  trigger(): void {
    if (this.stopped) return;
    if (this.current) {
      this.again = true;
      return;
    }
    this.current = this.round()
      .catch((error: unknown) =>
        this.log.warn({ err: error }, 'reconcile round failed; the next one tries again'),
      )
      .finally(() => {
        this.current = undefined;
        if (this.again) {
          this.again = false;
          this.trigger();
        }
      });
  }

  /** One round; resolves with the ids of the jobs whose runs it queued again. */
  async round(): Promise<string[]> {
    if (await this.readEpochs()) this.fullSweepsLeft = SWEEPS_AFTER_A_LOSS;
    const full = this.fullSweepsLeft > 0;
    if (full) this.fullSweepsLeft -= 1;
    const requeued: string[] = [];
    let cursor = full ? undefined : this.cursor;
    for (;;) {
      const page = await this.openRuns.page(cursor, GRACE_SECONDS, PAGE);
      requeued.push(...(await this.requeueMissing(page)));
      const last = page.at(-1);
      cursor = page.length < PAGE || !last ? undefined : { cursorAt: last.cursorAt, id: last.id };
      if (!full || !cursor || this.stopped) break;
    }
    this.cursor = cursor;
    if (requeued.length > 0) {
      this.log.info(
        { requeued: requeued.length, job_ids: requeued.slice(0, 50), full_sweep: full },
        'runs re-queued from PostgreSQL: their {agent-runs} entries were gone',
      );
    }
    return requeued;
  }

  /** Reads every slot's epoch (creating missing ones); true when the runs' slot is new to this replica. */
  private async readEpochs(): Promise<boolean> {
    const slots = [RUNS_SLOT, ...Object.keys(this.config.servers)];
    const readings = await Promise.all(slots.map((slot) => this.epochs.read(slot)));
    readings.forEach((reading, index) => {
      if (reading.lost) {
        this.log.warn(
          { slot: slots[index], epoch: reading.epoch, previous_epoch: reading.previous },
          `${this.store.kind === 'redis' ? 'Redis' : 'the queue schema'} lost its data (its epoch changed): rebuilding the queues from PostgreSQL`,
        );
      }
    });
    return readings[0]?.changed ?? false;
  }

  /**
   * Puts right the runs of `page` whose `{agent-runs}` entry disagrees with PostgreSQL; returns the ids
   * of those queued again:
   * - no entry: queued again (the queues lost it);
   * - an entry BullMQ failed for good (out of attempts, stalled too often) while PostgreSQL shows the job
   *   open: its give-up write was lost (PostgreSQL was down when BullMQ failed it), so it is made again;
   * - an entry that completed while PostgreSQL shows the job open: a run that stopped without ending the
   *   job, which no add could revive (the id is taken): the entry is removed and the run queued again,
   *   to resume from its checkpoint.
   */
  private async requeueMissing(page: OpenRun[]): Promise<string[]> {
    // A run this replica still runs lost its job with the queues' data and stops at its next lock
    // renewal; the next round queues it again (queued now, it could start here beside its stopping twin).
    const candidates = page.filter((run) => !this.runner.isRunningHere(run.id));
    // Through BullMQ's API, not the store: the same read on either backend.
    const entries = await Promise.all(candidates.map((run) => this.runs.queue.getJob(run.id)));
    const requeued: string[] = [];
    for (const [index, run] of candidates.entries()) {
      // Fields without BullMQ's `timestamp` are strays, not a job: as good as no entry.
      const entry = entries[index]?.timestamp ? entries[index] : undefined;
      const failedReason = entry?.failedReason;
      try {
        if (entry && !entry.finishedOn) continue;
        if (entry && failedReason) {
          await this.runner.giveUp(run.id, failedReason);
          this.log.warn(
            { job_id: run.id, status: run.status, reason: failedReason },
            'a run its queue had failed was still open in PostgreSQL: marked failed',
          );
          continue;
        }
        if (entry) await this.runs.queue.remove(run.id);
        await this.requeue(run);
        requeued.push(run.id);
      } catch (error) {
        this.log.warn({ job_id: run.id, status: run.status, err: error }, 'could not queue a lost run again');
      }
    }
    return requeued;
  }

  /**
   * A parked job comes back parked: delayed until its earliest expiry, as the consumer parks it. An
   * answer that came in meanwhile found no run to wake (it was gone), so the job is looked at again
   * after the add and woken if it is no longer waiting.
   */
  private async requeue(run: OpenRun): Promise<void> {
    const delayMs =
      run.status === 'input_required' && run.wakeAt ? Math.max(0, run.wakeAt.getTime() - Date.now()) : 0;
    await this.runs.enqueue(run.id, { delayMs });
    if (delayMs > 0 && (await this.openRuns.status(run.id)) !== 'input_required')
      await this.runs.wake(run.id);
    this.log.info(
      { job_id: run.id, status: run.status, ...(delayMs > 0 ? { delay_ms: delayMs } : {}) },
      'run queued again from PostgreSQL',
    );
  }
}
