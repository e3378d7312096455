import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import {
  AGENT_RUNS_QUEUE,
  bullmqBinding,
  ClockOffsetGate,
  type HeldJob,
  type LockHold,
  lockHoldFor,
  ServerClock,
  type Store,
  type SwitchyardConfig,
  storeName,
} from '@switchyard/contracts';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { AgentRunData } from '../../jobs/agent-run-queue.ts';
import { InputStore } from '../../jobs/input-store.ts';
import { isDependencyOutage } from '../../runtime/dependency-errors.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { OrchestratorEnv } from '../../runtime/orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, STORE } from '../../runtime/tokens.ts';
import { JobRunner, type RunExit } from './job-runner.ts';
import { BullRunLease } from './run-lease.ts';

/**
 * A run interrupted by PostgreSQL or Redis being unreachable is put back to wait this long, as often
 * as it takes: an outage is not the run's failure and uses none of its attempts, so a run outlasts a
 * database restart of any length and continues by itself afterwards.
 */
const OUTAGE_RETRY_MS = 2_000;

/** Until the first clock measurement succeeds (postgres), it is tried again this often; no run is taken. */
const FIRST_CLOCK_RETRY_MS = 2_000;

/**
 * This replica's consumer of the `agent-runs` queue. Every replica runs one, so runs spread over the
 * replicas, and a run whose replica dies (lock not renewed) is handed to another by BullMQ's stalled
 * check.
 */
@Injectable()
export class AgentRunConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private worker: Worker<AgentRunData> | undefined;
  /** Takes back a run's lock that merely expired (lock-take-back.ts), on the queue's store. */
  private lockHold: LockHold | undefined;
  /** The runs this replica is running now, as BullMQ handed them over (for taking back a lock). */
  private readonly held = new Map<string, HeldJob>();
  /**
   * Postgres only (undefined on Redis, where a lock is on Redis's clock): BullMQ stamps and judges run
   * locks with this host's clock, so while it is too far from the database's (ClockOffsetGate) the
   * Worker is paused: it takes no run and runs no stalled check (docs/postgres-backend.md §4).
   */
  private clockGate: ClockOffsetGate | undefined;
  private clock: ServerClock | undefined;
  private firstClockRetry: NodeJS.Timeout | undefined;
  private destroyed = false;

  constructor(
    @Inject(JobRunner) private readonly runner: JobRunner,
    @Inject(STORE) private readonly store: Store,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(InputStore) private readonly inputs: InputStore,
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
        ...bullmqBinding(this.store).options,
        name: this.env.replicaId,
        concurrency: settings.agentRunConcurrency,
        lockDuration: settings.lockDurationMs,
        stalledInterval: settings.stalledIntervalMs,
        maxStalledCount: 10,
        // On postgres it runs only once the clock is known to be within bounds (watchClock).
        autorun: this.store.kind === 'redis',
      },
      bullmqBinding(this.store).factory as never,
    );
    this.lockHold = lockHoldFor(this.store, this.worker);
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
    // A lock that could not be renewed (e.g. the queue store was down past lockDurationMs) may already belong to
    // another replica: stop the run here rather than run it twice at once — unless it merely expired
    // and nobody took the run meanwhile, which is taken back (a store pause is not a hand-over).
    this.worker.on('lockRenewalFailed', (jobIds) => {
      for (const jobId of jobIds) {
        void this.takeBackOrStop(jobId);
      }
    });
    this.clockGate = ClockOffsetGate.for(this.store, settings.lockDurationMs);
    if (this.clockGate) this.watchClock(this.clockGate);
  }

  /** Measures the database's clock at once, then as ServerClock.start() repeats it; each verdict pauses or runs the Worker. */
  private watchClock(gate: ClockOffsetGate): void {
    const name = storeName(this.store);
    let decided = false;
    this.clock = ServerClock.of(this.store, {
      onError: (error) => this.log.warn({ err: error }, `could not read the ${name} clock`),
      onSample: (sample) => {
        const flipped = gate.observe(sample);
        const fields = { offsetMs: sample.offsetMs, rttMs: sample.rttMs, limitMs: gate.limitMs };
        if (!decided) this.log.info(fields, `clock synced to ${name}`);
        if (flipped?.refusing) {
          this.log.error(fields, `clock too far from ${name}: taking no runs, running no stalled checks`);
        } else if (flipped) {
          this.log.info(fields, `clock back within bounds of ${name}: taking runs again`);
        }
        if (flipped || !decided) this.followClock(gate.current.refusing);
        decided = true;
      },
    });
    const first = (): void => {
      this.clock?.sync().then(
        () => this.clock?.start(),
        (error: unknown) => {
          this.log.warn(
            { err: error, retry_in_ms: FIRST_CLOCK_RETRY_MS },
            `could not read the ${name} clock`,
          );
          if (!this.destroyed) this.firstClockRetry = setTimeout(first, FIRST_CLOCK_RETRY_MS);
        },
      );
    };
    first();
  }

  /** Pausing also ends BullMQ's stalled-check loop (worker.js: pause() bumps its generation). */
  private followClock(refusing: boolean): void {
    const worker = this.worker;
    if (!worker || this.destroyed) return;
    if (refusing) {
      if (worker.isRunning() && !worker.isPaused()) {
        worker.pause(true).catch((error: unknown) => this.log.error({ err: error }, 'could not pause'));
      }
    } else if (!worker.isRunning()) {
      worker.run().catch((error: unknown) => this.log.error({ err: error }, 'agent-runs worker loop ended'));
    } else if (worker.isPaused()) {
      void worker.resume();
    }
  }

  /** Takes an expired lock of a run back if nobody took the run since; otherwise stops the run here. */
  private async takeBackOrStop(jobId: string): Promise<void> {
    if (await this.takeBack(this.held.get(jobId))) {
      this.log.info({ job_id: jobId }, 'expired lock of a run taken back');
      return;
    }
    this.log.warn({ job_id: jobId }, 'lost the lock of a run; stopping it here');
    this.worker?.cancelJob(jobId, 'lock lost');
  }

  /** True when the run's lock is this replica's again (kept, or re-taken after it merely expired). */
  private async takeBack(job: HeldJob | undefined): Promise<boolean> {
    if (!job || !this.lockHold) return false;
    return this.lockHold.hold(job, this.config.orchestrator.lockDurationMs).catch(() => false);
  }

  private async process(job: Job<AgentRunData>, token: string | undefined, signal?: AbortSignal) {
    const id = String(job.id);
    // Its own hold, not the map's latest: a run queued again after Redis lost it (the reconciler) may
    // start here while the stale run of the same id is still stopping, and neither may use the other's.
    const mine = token ? { id, attemptsStarted: job.attemptsStarted, token } : undefined;
    if (mine) this.held.set(id, mine);
    const lease = new BullRunLease(
      job,
      token,
      this.config.orchestrator.lockDurationMs,
      signal,
      (error) => this.log.warn({ job_id: job.id, err: error }, 'could not confirm the lock of a run'),
      () => this.takeBack(mine),
    );
    try {
      await this.runHeld(job, token, lease);
    } finally {
      if (this.held.get(id) === mine) this.held.delete(id);
    }
  }

  private async runHeld(job: Job<AgentRunData>, token: string | undefined, lease: BullRunLease) {
    let exit: RunExit;
    try {
      exit = await this.runner.run(job.data.jobId, this.env.replicaId, lease);
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
    if (exit.parked && token) await this.park(job, token, exit);
  }

  /**
   * A run waiting for a person gives its lock and slot back: its job waits delayed until the earliest
   * expiry (or the deadline), and an answer promotes it (InputsService). The delay is set before the
   * job is marked `input_required`, so an answer that sees the mark always finds a delayed job to
   * promote; an answer that came in between finds the job `running` and is seen here instead.
   */
  private async park(
    job: Job<AgentRunData>,
    token: string,
    exit: Extract<RunExit, { parked: true }>,
  ): Promise<never> {
    await job.moveToDelayed(Math.max(Date.now() + 1, exit.wakeAt), token);
    if (await this.inputs.park(job.data.jobId)) {
      await this.runner.announceParked(job.data.jobId, exit);
    } else {
      this.log.info({ job_id: job.data.jobId }, 'answered while parking; the run resumes at once');
      await job.promote();
    }
    throw new DelayedError();
  }

  async onModuleDestroy(): Promise<void> {
    this.destroyed = true;
    clearTimeout(this.firstClockRetry);
    this.clock?.stop();
    await this.worker?.close();
  }
}
