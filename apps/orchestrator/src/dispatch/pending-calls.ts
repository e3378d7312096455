import {
  type Clock,
  type ToolCallJob,
  type ToolCallOutcome,
  ToolCallOutcomeSchema,
  traceIdOf,
} from '@switchyard/contracts';
import type { Job, Queue } from 'bullmq';
import type { CatalogReader } from '../catalog/catalog-reader.ts';
import type { FairShare } from './fair-share.ts';
import { localOutcome } from './local-outcome.ts';
import { OutcomeListener, type SettledNotice } from './outcome-listener.ts';
import { settledOutcome } from './settled-outcome.ts';
import { DispatchError, type ToolCallRequest, teamOf } from './tool-call-request.ts';

/** This process's one wait for a call's outcome. */
export interface PendingCall {
  request: ToolCallRequest;
  data: ToolCallJob;
  queue: Queue;
  bullId: string;
  since: number;
  promise: Promise<ToolCallOutcome>;
  settled: boolean;
  /** Set once the add has returned: before that, a missing job only means the add is still on its way. */
  queued: boolean;
  /** Set once the call joined its team's line on the server (fair share): leaving it is owed on settle. */
  inLine: boolean;
}

interface Entry extends PendingCall {
  resolve: (outcome: ToolCallOutcome) => void;
  cleanup: Array<() => void>;
}

const RECONCILE_BATCH = 200;
const NOT_STARTED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'wait', 'paused']);

/**
 * The calls this orchestrator waits for, each settled exactly once: by its outcome notice, by its job's
 * state (first look, reconcile rounds for a lost notice), by its queue deadline while no worker took
 * it, or by a cancel that removed it before it ran. One stream reader serves every server's calls.
 */
export class PendingCalls {
  private readonly entries = new Map<string, Entry>();
  private readonly listener: OutcomeListener;
  private reconcileTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      listener: OutcomeListener;
      fairShare: FairShare;
      catalog: CatalogReader;
      onError: (error: unknown) => void;
      /** Adds an idempotent call whose queue job vanished again under its id (it may run again). */
      requeue?: (call: PendingCall) => Promise<void>;
      /** The clock deadlines are stamped on: the store's (ServerClock); default this host's. */
      clock?: Clock;
    },
  ) {
    this.listener = deps.listener;
  }

  async start(reconcileEveryMs: number): Promise<void> {
    await this.listener.start();
    this.reconcileTimer = setInterval(
      () => void this.reconcile(reconcileEveryMs).catch(this.deps.onError),
      reconcileEveryMs,
    );
    this.reconcileTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.reconcileTimer);
    await this.listener.stop();
  }

  /** Now on the clock the calls' deadlines were stamped on. */
  private now(): number {
    return this.deps.clock?.now() ?? Date.now();
  }

  get(queue: Queue, bullId: string): PendingCall | undefined {
    return this.entries.get(OutcomeListener.key(queue.name, bullId));
  }

  ofJob(jobId: string): PendingCall[] {
    return [...this.entries.values()].filter((entry) => entry.request.jobId === jobId);
  }

  /**
   * The entry already waiting for this call, or a new one that listens for its outcome notice (before
   * anything is added or read, so a call that settles at once is not missed).
   */
  attach(request: ToolCallRequest, data: ToolCallJob, queue: Queue, bullId: string) {
    const key = OutcomeListener.key(queue.name, bullId);
    const existing = this.entries.get(key);
    if (existing) return { entry: existing as PendingCall, created: false };
    let resolve: (outcome: ToolCallOutcome) => void = () => undefined;
    const promise = new Promise<ToolCallOutcome>((settle) => {
      resolve = settle;
    });
    const entry: Entry = {
      request,
      data,
      queue,
      bullId,
      since: Date.now(),
      resolve,
      promise,
      settled: false,
      queued: false,
      inLine: false,
      cleanup: [],
    };
    this.entries.set(key, entry);
    entry.cleanup.push(
      this.listener.on(queue.name, bullId, (notice) =>
        this.guard(entry, 'outcome notice', this.onNotice(entry, notice)),
      ),
    );
    return { entry: entry as PendingCall, created: true };
  }

  /** The call is queued and may run: from here on only its job, the deadline or a cancel settles it. */
  async watch(call: PendingCall): Promise<void> {
    const entry = call as Entry;
    entry.queued = true;
    const untilDeadline = Math.max(0, entry.data.deadline - this.now()) + 50;
    const timer = setTimeout(
      () => this.guard(entry, 'deadline check', this.onDeadline(entry)),
      untilDeadline,
    );
    entry.cleanup.push(() => clearTimeout(timer));
    // A failed first look is repeated by the reconcile rounds.
    await this.check(entry).catch((error: unknown) => this.report(entry, 'state check failed', error));
  }

  /**
   * Removes the calls no worker has taken yet (their cancel already published): each ends `cancelled`,
   * executed `no`; a running one is left to report its own outcome. Returns how many were removed.
   */
  async removeQueued(calls: PendingCall[], reason: string): Promise<number> {
    const entries = calls as Entry[];
    const removed = await Promise.all(entries.map((entry) => this.removeIfNotStarted(entry)));
    entries.forEach((entry, index) => {
      if (removed[index]) {
        this.settle(
          entry,
          localOutcome(entry.data, 'cancelled', `This call was not run: ${reason}.`, reason),
        );
      }
    });
    return removed.filter(Boolean).length;
  }

  settle(call: PendingCall, outcome: ToolCallOutcome): void {
    const entry = call as Entry;
    if (entry.settled) return;
    entry.settled = true;
    this.entries.delete(OutcomeListener.key(entry.queue.name, entry.bullId));
    for (const cleanup of entry.cleanup) cleanup();
    if (entry.inLine) {
      this.deps.fairShare
        .leave(entry.data.server, teamOf(entry.data), entry.bullId)
        .catch((error: unknown) => this.report(entry, 'leaving the team line failed', error));
    }
    entry.resolve(outcome);
  }

  /** Reports a failed step with the call's server, tool, job, call and trace; never throws. */
  report(call: PendingCall, step: string, error: unknown): void {
    const { server, tool, jobId, toolCallId, trace } = call.data;
    const traceId = traceIdOf(trace);
    this.deps.onError(
      new DispatchError(
        `${step} for ${server}__${tool} (job ${jobId}, call ${toolCallId}${traceId ? `, trace ${traceId}` : ''}): ${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      ),
    );
  }

  /** Runs a background step of one call; a failure is reported with the call's context, never thrown. */
  private guard(entry: Entry, step: string, work: Promise<void>): void {
    work.catch((error: unknown) => this.report(entry, step, error));
  }

  private async onNotice(entry: Entry, notice: SettledNotice): Promise<void> {
    if (notice.outcome) {
      const parsed = ToolCallOutcomeSchema.safeParse(parseJson(notice.outcome));
      if (parsed.success) {
        this.settle(entry, parsed.data);
        return;
      }
    }
    await this.check(entry);
  }

  /** Settles the call from its job if the job has settled (or vanished). */
  private async check(entry: Entry): Promise<void> {
    if (entry.settled) return;
    const job = (await entry.queue.getJob(entry.bullId)) as Job | undefined;
    if (entry.settled) return;
    if (!job) {
      // Queued, then gone: Redis lost it with its data (docs/semantics.md §18). An idempotent call
      // may run again; a non-idempotent one may have run already and is not added twice.
      if (entry.data.idempotent && this.deps.requeue) {
        await this.deps.requeue(entry);
        return;
      }
      this.settle(
        entry,
        localOutcome(
          entry.data,
          entry.data.idempotent ? 'failed' : 'indeterminate',
          `The call was lost: Redis lost its queue entry of ${entry.data.server}__${entry.data.tool}, so it may or may not have run; it was not run again.`,
          'job_missing',
          'unknown',
        ),
      );
      return;
    }
    const outcome = settledOutcome(job, entry.data);
    if (outcome) this.settle(entry, outcome);
  }

  /** At the deadline a call still queued is dropped; a call already running is left to its timeout. */
  private async onDeadline(entry: Entry): Promise<void> {
    if (entry.settled) return;
    if (await this.removeIfNotStarted(entry)) {
      // The call is gone from its queue either way; the catalog only picks the better explanation.
      const ready = await this.deps.catalog.availability(entry.data.server).then(
        (availability) => availability === 'ready',
        () => true,
      );
      // What keeps the sessions from being ready (a lastError is worded for any team to read, as the
      // circuit's outcome quotes it): a call should say why it could not run, not only that it did not.
      const why = ready
        ? undefined
        : await this.deps.catalog.lastError(entry.data.server).catch(() => undefined);
      this.settle(
        entry,
        ready
          ? localOutcome(
              entry.data,
              'expired',
              `The call waited in the queue of ${entry.data.server} past its deadline and was not run.`,
              undefined,
              undefined,
              this.now(),
            )
          : localOutcome(
              entry.data,
              'unavailable',
              `No worker had a ready session to ${entry.data.server} before the deadline${why ? ` (${why})` : ''}; the call was not run.`,
              undefined,
              undefined,
              this.now(),
            ),
      );
    } else {
      await this.check(entry);
    }
  }

  private async removeIfNotStarted(entry: Entry): Promise<boolean> {
    try {
      const state = await entry.queue.getJobState(entry.bullId);
      if (!NOT_STARTED_STATES.has(state)) return false;
      // remove() refuses (returns 0) a job a worker holds the lock of: a call that just started is
      // never reported as not run. 1 means BullMQ removed it before any worker took it.
      return (await entry.queue.remove(entry.bullId)) === 1;
    } catch (error) {
      // Not removed as far as we know: the call keeps its own, real outcome.
      this.report(entry, 'removing the queued call failed', error);
      return false;
    }
  }

  /**
   * The safety net for a lost notification (a worker that died between completing a job and announcing
   * it). Checks a bounded number of calls per round, least recently checked first (a checked call moves
   * to the back), so thousands queued behind a serialized server cost a few hundred reads per round.
   */
  private async reconcile(olderThanMs: number): Promise<void> {
    const cutoff = Date.now() - olderThanMs;
    const due = [...this.entries.entries()]
      .filter(([, entry]) => entry.queued && entry.since < cutoff)
      .slice(0, RECONCILE_BATCH);
    for (const [key, entry] of due) {
      // Past its deadline, the deadline step is repeated too, in case its own run failed on Redis.
      const step = this.now() > entry.data.deadline + 50 ? this.onDeadline(entry) : this.check(entry);
      await step.catch((error: unknown) => this.report(entry, 'reconcile', error));
      if (!entry.settled && this.entries.delete(key)) this.entries.set(key, entry);
    }
  }
}

/** A notice's JSON, or undefined when it is not JSON (the job itself is then read instead). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
