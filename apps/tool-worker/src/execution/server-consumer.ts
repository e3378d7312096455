import {
  type ArgumentValidator,
  bullmqBinding,
  type Clock,
  type OutcomeNotice,
  outcomeNotices,
  type ServerConfig,
  type Store,
  type StoredToolCallOutcome,
  type ToolCallRetention,
  toolCallJobRetention,
  toolQueueName,
  type WorkerSettings,
} from '@switchyard/contracts';
import { type Job, Queue, type Worker } from 'bullmq';
import type { TeamCredentials } from '../credentials/team-credentials.ts';
import type { TeamSessions } from '../credentials/team-sessions.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { CallTimeouts } from './call-timeouts.ts';
import { GatedWorker } from './gated-worker.ts';
import { GlobalConcurrency, reconnectsOf } from './global-concurrency.ts';
import { CallAbort, InFlightCalls } from './in-flight-calls.ts';
import { type JobFence, jobFenceFor } from './job-fence.ts';
import { LockWatchdog } from './lock-watchdog.ts';
import { lockWatchdogProbe } from './lock-watchdog-probe.ts';
import { logRelay, progressRelay } from './progress-relay.ts';
import type { ReplicaWait } from './replica-wait.ts';
import { createToolCallProcessor } from './tool-call-processor.ts';

export interface ConsumerDeps {
  server: string;
  config: ServerConfig;
  session: ManagedSession;
  settings: WorkerSettings;
  /** toolCalls: the same retention the dispatcher gives the jobs it adds. */
  retention: ToolCallRetention;
  prefix: string;
  /** The queue store: on Redis, its shared non-blocking connection (blocking reads get their own). */
  store: Store;
  validator: ArgumentValidator;
  /** Which team's credential each call carries (servers.<name>.auth). */
  credentials: TeamCredentials;
  /** Set for a stdio server with per-team secrets (servers.<name>.auth). */
  teamSessions?: TeamSessions | undefined;
  workerId: string;
  log: Logger;
  /** Every outcome this consumer settles (metrics). */
  onOutcome: (outcome: StoredToolCallOutcome) => void;
  /** The store's clock (ServerClock): deadlines and queue waits are judged on the clock that stamped them. */
  clock: Clock;
  /** The replicas a non-idempotent call's marker must reach before it is sent (worker.replicaWait). */
  replicaWait?: ReplicaWait;
}

/**
 * The BullMQ Worker of one server's queue, running only while this worker's session to that server is
 * ready (docs/semantics.md): when the session drops, the consumer pauses and queued calls wait for a worker
 * whose session is ready.
 */
export class ServerConsumer {
  private readonly worker: Worker<unknown, StoredToolCallOutcome>;
  private readonly queue: Queue;
  private readonly concurrency: GlobalConcurrency;
  private readonly inFlight = new InFlightCalls();
  private readonly fence: JobFence;
  private running = false;
  /** The store has not answered for a lock duration (lock-watchdog.ts): no calls are taken until it does. */
  private redisLost = false;
  /** The host's clock is too far from the store's (ClockOffsetGate, postgres): no calls, no stalled check. */
  private clockRefused = false;
  /** start() ran: before it, a clock verdict is only recorded (the concurrency is not set yet). */
  private started = false;
  private readonly watchdog: LockWatchdog;
  readonly queueName: string;

  constructor(private readonly deps: ConsumerDeps) {
    const { server, config, settings, store, workerId } = deps;
    const queueName = toolQueueName(server);
    this.queueName = queueName;
    const binding = bullmqBinding(store);
    this.queue = new Queue(queueName, binding.options, binding.factory as never);
    this.concurrency = new GlobalConcurrency({
      queue: this.queue,
      reconnects: reconnectsOf(store),
      concurrency: config.concurrency,
      checkEveryMs: settings.heartbeatMs,
      server,
      log: deps.log,
    });
    this.fence = jobFenceFor(store, this.queue, settings.lockDurationMs, deps.replicaWait);
    const processor = createToolCallProcessor({
      ...deps,
      fence: this.fence,
      inFlight: this.inFlight,
      relayProgress: progressRelay(store, deps.log),
      relayLog: logRelay(store, deps.log),
      timeouts: new CallTimeouts({ server, config, store, log: deps.log }),
    });
    // Gated: after a reconnect it takes no call until the concurrency is set again (GlobalConcurrency).
    this.worker = new GatedWorker<unknown, StoredToolCallOutcome>(
      queueName,
      processor,
      {
        ...bullmqBinding(store).options,
        name: workerId,
        autorun: false,
        concurrency: config.concurrency,
        lockDuration: settings.lockDurationMs,
        stalledInterval: settings.stalledIntervalMs,
        // A stalled job goes back to the queue so a live worker settles it (re-runs it when idempotent,
        // reports it indeterminate when not); BullMQ's own "stalled too often" failure is a last resort.
        maxStalledCount: 5,
        // BullMQ uses a job's own removeOn* options and these only for a job added without them; both come
        // from toolCalls, so whichever applies keeps a finished call as long as a run may look it up.
        ...toolCallJobRetention(deps.retention),
      },
      this.concurrency,
      bullmqBinding(store).factory as never,
    );
    this.worker.on('completed', (job, outcome) => {
      deps.onOutcome(outcome);
      void this.notify(job, outcome);
    });
    // finishedOn is set only when the job failed for good: out of attempts, or unrecoverable with
    // attempts left (stalled more than maxStalledCount, an UnrecoverableError). A retried one is not final.
    this.worker.on('failed', (job, error) => {
      if (job?.finishedOn !== undefined) void this.notifyFailure(job, error);
    });
    // BullMQ only reports a failed renewal; the call it belongs to is ours to stop.
    this.worker.on('lockRenewalFailed', (ids) => {
      for (const id of ids) {
        this.onLockLost(id).catch((error: unknown) =>
          deps.log.error({ server, bull_job_id: id, err: error }, 'handling a lost lock failed'),
        );
      }
    });
    // A partitioned link hangs the renewal instead of failing it, so 'lockRenewalFailed' would come
    // only when the link heals: the watchdog tells sooner, from the probes it sends (lock-watchdog.ts).
    this.watchdog = new LockWatchdog({
      probe: lockWatchdogProbe(store, this.queue),
      lockDurationMs: settings.lockDurationMs,
      onLost: (silentMs) => this.onRedisLost(silentMs),
      onRestored: () => this.onRedisRestored(),
    });
    this.worker.on('error', (error) => deps.log.error({ server, err: error }, 'BullMQ worker error'));
    deps.session.on('state', (state) => {
      this.follow(state === 'ready').catch((error: unknown) =>
        deps.log.error({ server, state, err: error }, 'could not follow the session state'),
      );
    });
  }

  /**
   * Sets the queue's fleet-wide concurrency (and keeps it set: GlobalConcurrency) and starts consuming
   * if the session is ready.
   */
  async start(): Promise<void> {
    await this.concurrency.start();
    this.started = true;
    await this.follow(this.deps.session.state === 'ready');
  }

  private async follow(sessionReady: boolean): Promise<void> {
    const ready = sessionReady && !this.redisLost && !this.clockRefused;
    if (ready && !this.running) {
      this.running = true;
      if (this.worker.isPaused()) await this.worker.resume();
      else if (!this.worker.isRunning()) {
        this.worker.run().catch((error: unknown) => this.deps.log.error({ err: error }, 'worker loop ended'));
      }
      this.deps.log.info({ server: this.deps.server }, 'consuming queue');
    } else if (!ready && this.running) {
      this.running = false;
      // Don't wait for active calls: they settle on their own (their session just went away).
      // Pausing also ends BullMQ's stalled-check loop (worker.js: pause() bumps its generation).
      await this.worker.pause(true);
      this.deps.log.info(
        { server: this.deps.server },
        !sessionReady
          ? 'stopped consuming queue: session not ready'
          : this.redisLost
            ? 'stopped consuming queue: Redis unreachable'
            : 'stopped consuming queue: clock too far from the store',
      );
    }
  }

  /**
   * A renewal failed: after a Redis pause the lock may merely have expired with the job still ours
   * (then it is taken back); if the job went to another worker, the MCP request is aborted
   * (notifications/cancelled) and no outcome will be recorded for it.
   */
  private async onLockLost(id: string): Promise<void> {
    const call = this.inFlight.get(id);
    if (!call) return;
    const held = await this.fence.hold(call.job, call.token).catch(() => false);
    if (held) {
      this.deps.log.info({ server: this.deps.server, bull_job_id: id }, 'expired lock taken back');
      return;
    }
    this.deps.log.warn({ server: this.deps.server, bull_job_id: id }, 'lock lost: aborting the call');
    this.inFlight.abort(id, new CallAbort('lock_lost', 'the job lock was lost'));
  }

  /** Starts watching this queue's route to the store (lock-watchdog.ts); close() stops it. */
  watchRedis(): void {
    this.watchdog.start();
  }

  /**
   * No answer from Redis for a lock duration: every lock of this queue may have expired and its job gone
   * to another worker, which on a `concurrency: 1` server would run beside ours. The calls are aborted
   * (notifications/cancelled) without asking Redis, which cannot answer; once it answers, the processor
   * asks whether each job is still ours (CallAbort 'unreachable'): another worker's is left to it, ours
   * ends as a lost connection would. A call that already finished keeps its result, held until Redis
   * answers (the abort reaches only requests still open). No new call is taken until Redis answers again.
   */
  private onRedisLost(silentMs: number): void {
    const { server, log, settings } = this.deps;
    this.redisLost = true;
    const reason = `no answer from Redis for ${silentMs} ms (worker.lockDurationMs ${settings.lockDurationMs}): the job lock may have passed to another worker`;
    for (const id of this.inFlight.abortAll(new CallAbort('unreachable', reason))) {
      log.warn(
        { server, bull_job_id: id, silentMs, reason: 'redis_unreachable' },
        'lock lost: aborting the call',
      );
    }
    log.warn({ server, silentMs }, 'Redis unreachable past the lock duration: not taking calls');
    this.follow(this.deps.session.state === 'ready').catch((error: unknown) =>
      log.error({ server, err: error }, 'could not stop consuming while Redis is unreachable'),
    );
  }

  private onRedisRestored(): void {
    const { server, log } = this.deps;
    this.redisLost = false;
    log.info({ server }, 'Redis answers again');
    this.follow(this.deps.session.state === 'ready').catch((error: unknown) =>
      log.error({ server, err: error }, 'could not resume consuming after Redis answered again'),
    );
  }

  /**
   * The host's clock went out of (or back within) bounds of the store's (ClockOffsetGate): while out, the
   * Worker is paused, so it takes no call and runs no stalled check; calls already running finish.
   */
  refuseForClock(refusing: boolean): Promise<void> {
    this.clockRefused = refusing;
    return this.started ? this.follow(this.deps.session.state === 'ready') : Promise.resolve();
  }

  /** An explicit cancel of a call (from the orchestrator): aborts it if it runs here. */
  cancel(id: string, reason: string): boolean {
    const running = this.inFlight.cancel(id, reason);
    if (running) this.deps.log.info({ server: this.deps.server, bull_job_id: id, reason }, 'cancelling call');
    return running;
  }

  /** Tells waiting orchestrators; the outcome itself is already durable as the job's return value. */
  private async notify(job: Job, outcome: StoredToolCallOutcome): Promise<void> {
    await this.publish(job, { outcome: JSON.stringify(outcome) });
  }

  private async notifyFailure(job: Job, error: Error): Promise<void> {
    await this.publish(job, { failedReason: error.message });
  }

  private async publish(
    job: Job,
    settled: Pick<OutcomeNotice, 'outcome'> | Pick<OutcomeNotice, 'failedReason'>,
  ): Promise<void> {
    const { store, log, server } = this.deps;
    try {
      await outcomeNotices(store).announce({ queue: toolQueueName(server), id: String(job.id), ...settled });
    } catch (error) {
      // Waiters reconcile from the job's state, so a lost notification delays, never loses, an outcome.
      log.warn({ server, bull_job_id: job.id, err: error }, 'could not publish outcome notification');
    }
  }

  /** Stops taking calls and waits for the ones in flight, up to `graceMs`; then abandons them. */
  async close(graceMs: number): Promise<void> {
    this.watchdog.stop();
    const graceful = this.worker.close();
    // After close() marked the worker closing: a fetch waiting at the gate then takes nothing.
    this.concurrency.stop();
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([graceful.then(() => 'closed' as const), timer])) === 'timeout') {
      this.deps.log.warn({ server: this.deps.server, graceMs }, 'in-flight calls outlived the grace period');
      await this.worker.close(true);
    }
    await this.queue.close();
  }
}
