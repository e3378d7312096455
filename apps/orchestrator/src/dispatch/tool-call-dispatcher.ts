import {
  type Answer,
  ArgumentValidator,
  carrierFrom,
  isIdempotent,
  type OutcomeStatus,
  type RedisConnection,
  redisKeys,
  type SwitchyardConfig,
  type ToolCallCancel,
  type ToolCallJob,
  ToolCallJobSchema,
  type ToolCallOutcome,
  ToolCallOutcomeSchema,
  type TraceCarrier,
  toolCallJobId,
  toolCallJobRetention,
  toolQueueName,
  traceIdOf,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import { type Job, Queue } from 'bullmq';
import type { CatalogReader } from '../catalog/catalog-reader.ts';
import { inSpan, SpanKind } from '../telemetry/spans.ts';
import { FairShare } from './fair-share.ts';
import { localOutcome } from './local-outcome.ts';
import { OutcomeListener, type SettledNotice } from './outcome-listener.ts';

export interface ToolCallRequest {
  jobId: string;
  toolCallId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  trace?: TraceCarrier;
  /** The calling team: the worker reaches the server with this team's credential. */
  team?: string;
  labels?: Record<string, string>;
  /** Overrides the server's queueTimeoutMs: how long the call may wait for a worker. */
  queueTimeoutMs?: number;
  /** A person's answer to the question the previous round of this call asked (docs/semantics.md §14). */
  answer?: Answer;
}

export interface DispatcherOptions {
  config: SwitchyardConfig;
  prefix: string;
  /** Shared connection for queue commands; BullMQ reuses it for every server's Queue. */
  redis: RedisConnection;
  catalog: CatalogReader;
  /**
   * How long (ms) a call must wait before it may run (a team's callsPerMinute); it is queued with that
   * BullMQ delay and its queue deadline moves by as much. Absent: no call waits.
   */
  pace?: (request: ToolCallRequest) => Promise<number>;
  /** How often calls still pending are checked against their job, in case a notification was lost. */
  reconcileEveryMs?: number;
  onError?: (error: unknown) => void;
}

interface Pending {
  request: ToolCallRequest;
  data: ToolCallJob;
  queue: Queue;
  bullId: string;
  since: number;
  resolve: (outcome: ToolCallOutcome) => void;
  promise: Promise<ToolCallOutcome>;
  settled: boolean;
  /** Set once the add has returned: before that, a missing job only means the add is still on its way. */
  queued: boolean;
  /** Set once the call joined its team's line on the server (fair share): leaving it is owed on settle. */
  inLine: boolean;
  cleanup: Array<() => void>;
}

const RECONCILE_BATCH = 200;
const NOT_STARTED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'wait', 'paused']);

/** Why an explicitly cancelled job's calls were stopped, as workers and outcomes are told. */
export const JOB_CANCELLED = 'the job was cancelled';

/** A dispatcher step that failed in the background, named with its call. */
export class DispatchError extends Error {
  override readonly name = 'DispatchError';
}

/**
 * The producer side of the tool fleet (docs/architecture.md §3, step 3): validates a call against the catalog, adds it
 * to its server's queue under a deterministic job id, and resolves with its one outcome. Awaiting uses
 * one stream reader for all servers, so the process holds two Redis connections whatever the number of
 * servers: the shared command connection and the reader's blocking one.
 */
export class ToolCallDispatcher {
  private readonly queues = new Map<string, Queue>();
  private readonly pending = new Map<string, Pending>();
  private readonly validator = new ArgumentValidator();
  private readonly fairShare: FairShare;
  private readonly listener: OutcomeListener;
  private reconcileTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.fairShare = new FairShare(options.redis, options.prefix, options.config);
    this.listener = new OutcomeListener(options.redis.duplicate(), options.prefix, (error) =>
      options.onError?.(error),
    );
  }

  async start(): Promise<void> {
    await this.listener.start();
    const every = this.options.reconcileEveryMs ?? 5_000;
    this.reconcileTimer = setInterval(
      () => void this.reconcile(every).catch((error: unknown) => this.options.onError?.(error)),
      every,
    );
    this.reconcileTimer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.reconcileTimer);
    await this.listener.stop();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }

  /** Dispatches one call and resolves with its outcome. Never rejects for a call-level failure. */
  async dispatch(request: ToolCallRequest): Promise<ToolCallOutcome> {
    const { config, catalog } = this.options;
    const server = config.servers[request.server];
    const now = Date.now();
    const data: ToolCallJob = ToolCallJobSchema.parse({
      jobId: request.jobId,
      toolCallId: request.toolCallId,
      server: request.server,
      tool: request.tool,
      arguments: request.arguments,
      deadline: now + (request.queueTimeoutMs ?? server?.queueTimeoutMs ?? 60_000),
      enqueuedAt: now,
      idempotent: false,
      trace: request.trace ?? {},
      ...(request.team ? { team: request.team } : {}),
      labels: request.labels ?? {},
      ...(request.answer ? { answer: request.answer } : {}),
    });
    if (!server) {
      return localOutcome(
        data,
        'failed',
        `No MCP server named "${request.server}" is configured.`,
        'unknown_server',
      );
    }
    const availability = await catalog.availability(request.server, server.unavailableAfterMs);
    const tool = await catalog.tool(request.server, request.tool);
    if (availability === 'none') {
      return localOutcome(
        data,
        'unavailable',
        `No worker serves ${request.server} right now; the call was not sent.`,
      );
    }
    if (availability === 'down') {
      const reason = (await catalog.lastError(request.server)) ?? 'its sessions keep failing';
      return localOutcome(
        data,
        'unavailable',
        `${request.server} has been failing for over ${server.unavailableAfterMs} ms, so the call was not sent: ${reason}`,
        'circuit_open',
      );
    }
    if (tool) {
      const check = this.validator.check(tool.inputSchema, request.arguments);
      if (!check.ok) {
        return localOutcome(
          data,
          'invalid_arguments',
          `Invalid arguments for ${request.server}__${request.tool}: ${check.errors.join('; ')}`,
          check.errors.join('; '),
        );
      }
    }
    // Unknown tool annotations (catalog not yet published) mean non-idempotent: the MCP default.
    data.idempotent = isIdempotent(server, request.tool, tool?.annotations);
    const delayMs = (await this.options.pace?.(request)) ?? 0;
    data.deadline += delayMs;
    const queue = toolQueueName(request.server);
    // The producer span: the worker's "process" span is its child through the context in the job data.
    return inSpan(
      `send ${queue}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          [ATTR.MESSAGING_SYSTEM]: 'bullmq',
          [ATTR.MESSAGING_OPERATION_TYPE]: 'send',
          [ATTR.MESSAGING_DESTINATION_NAME]: queue,
          [ATTR.MESSAGING_MESSAGE_ID]: toolCallJobId(request.jobId, request.toolCallId),
          [ATTR.SERVER]: request.server,
          [ATTR.GEN_AI_TOOL_NAME]: request.tool,
        },
      },
      async () => {
        data.trace = carrierFrom();
        const started = this.enqueueAndWait(request, data, server.retry, delayMs);
        await started.added;
        return started;
      },
    ).then((started) => started.outcome);
  }

  /**
   * An explicit cancel of job `jobId`'s calls (only an explicit cancel or the deadline may end a call
   * `cancelled`; a lost run lock is not a cancel). A call BullMQ removed before any worker took it ends
   * `cancelled` with executed `no`. A call already running is cancelled on its worker, which aborts the
   * MCP request (notifications/cancelled) and reports `cancelled` with executed `unknown`, or the real
   * result when the server answered first; its outcome arrives like any other. Returns the number of
   * calls removed before they ran.
   */
  async cancel(jobId: string, reason = JOB_CANCELLED): Promise<number> {
    const entries = [...this.pending.values()].filter((candidate) => candidate.request.jobId === jobId);
    // Workers hear the cancel first, so a call one of them takes while we remove the others is refused
    // before it is sent instead of running (one by one, removal would chase a fast worker down the queue).
    await this.requestCancels(
      entries.map((entry) => ({ queue: entry.queue.name, id: entry.bullId })),
      reason,
    );
    return this.removeQueued(entries, reason);
  }

  /**
   * Tells every worker, before any of `requests` is settled, to refuse them unsent and to abort the one
   * it runs: settling them one by one, a worker freed by the first cancel could start the next before
   * hearing of it. Then settle each with settleExisting.
   */
  async refuse(requests: ToolCallRequest[], reason: string): Promise<void> {
    await this.requestCancels(
      requests.map((request) => ({
        queue: toolQueueName(request.server),
        id: toolCallJobId(request.jobId, request.toolCallId),
      })),
      reason,
    );
  }

  /** One cancel message per queue, naming all of its calls. */
  private async requestCancels(calls: Array<{ queue: string; id: string }>, reason: string): Promise<void> {
    const byQueue = new Map<string, string[]>();
    for (const { queue, id } of calls) byQueue.set(queue, [...(byQueue.get(queue) ?? []), id]);
    await Promise.all([...byQueue].map(([queue, ids]) => this.requestCancel(queue, ids, reason)));
  }

  /**
   * Settles a call that must not start any more (its job was cancelled or is past its deadline) but that
   * an earlier run of the job — another replica, killed or frozen — may have queued. Never adds a job:
   * - no queue job under the call's deterministic id → `undefined`: it was never queued, and the caller
   *   records it `cancelled`, executed `no`;
   * - a finished job → the outcome recorded on it (it ran, or failed, for real);
   * - a job still queued → removed as by `cancel()`: `cancelled`, executed `no`; one a worker took
   *   meanwhile is treated as running;
   * - a running job → cancelled on its worker as by `cancel()`, and its real outcome awaited like a
   *   dispatched call's (`cancelled` with executed `unknown`, or the result when the server answered first).
   */
  async settleExisting(
    request: ToolCallRequest,
    reason: string,
    /** Set when refuse() already named this call with its siblings: a second, separate message could
     * overtake that one (on a cluster, PUBLISHes through different nodes keep no order). */
    options: { refused?: boolean } = {},
  ): Promise<ToolCallOutcome | undefined> {
    const queue = this.queueFor(request.server);
    const bullId = toolCallJobId(request.jobId, request.toolCallId);
    // Heard first, as in cancel(): a worker taking the call from now on refuses it unsent, including
    // one the earlier run adds late (a replica frozen between its lease check and the add, §4).
    if (!options.refused) await this.requestCancel(queue.name, [bullId], reason);
    let entry = this.pending.get(OutcomeListener.key(queue.name, bullId));
    if (!entry) {
      const job = (await queue.getJob(bullId)) as Job | undefined;
      if (!job) return undefined;
      const parsed = ToolCallJobSchema.safeParse(job.data);
      if (!parsed.success) {
        throw new DispatchError(
          `queue job ${bullId} of ${request.server}__${request.tool} (job ${request.jobId}, call ${request.toolCallId}) has unreadable data: ${parsed.error.message}`,
        );
      }
      const finished = settledOutcome(job, parsed.data);
      if (finished) return finished;
      const attached = this.attach(request, parsed.data);
      entry = attached.entry;
      if (attached.created) {
        // The earlier run put the call in its team's line; whoever settles it takes it out.
        entry.inLine = true;
        // The same watch as a dispatched call's: deadline, first look, then the reconcile rounds.
        await this.watch(entry);
      }
    }
    await this.removeQueued([entry], reason);
    return entry.promise;
  }

  /**
   * Removes the calls no worker has taken yet (their cancel already published): each ends `cancelled`,
   * executed `no`; a running one is left to report its own outcome. Returns how many were removed.
   */
  private async removeQueued(entries: Pending[], reason: string): Promise<number> {
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

  /**
   * Asks whichever worker runs one of `ids` to abort it, and every worker to refuse the others: one
   * PUBLISH per queue on the deployment's cancel channel.
   */
  private async requestCancel(queue: string, ids: string[], reason: string): Promise<void> {
    const request: ToolCallCancel = { queue, ids, reason };
    try {
      await this.options.redis.publish(redisKeys.cancels(this.options.prefix), JSON.stringify(request));
    } catch (error) {
      // The calls then finish on their own, with their real outcomes.
      this.options.onError?.(error);
    }
  }

  /** Queue depth of one server, for operators (GET /v1/servers, metrics). */
  async queueCounts(server: string): Promise<Record<string, number>> {
    return this.queueFor(server).getJobCounts(
      'waiting',
      'prioritized',
      'delayed',
      'active',
      'completed',
      'failed',
    );
  }

  /** The BullMQ queue of one server (sharing this dispatcher's connection), e.g. for a dashboard. */
  queue(server: string): Queue {
    return this.queueFor(server);
  }

  private queueFor(server: string): Queue {
    let queue = this.queues.get(server);
    if (!queue) {
      queue = new Queue(toolQueueName(server), {
        connection: this.options.redis,
        prefix: this.options.prefix,
      });
      queue.on('error', (error) => this.options.onError?.(error));
      this.queues.set(server, queue);
    }
    return queue;
  }

  /** Adds the call and returns both the add (for the producer span) and the awaited outcome. */
  private enqueueAndWait(
    request: ToolCallRequest,
    data: ToolCallJob,
    retry: { attempts: number; backoffMs: number },
    delayMs = 0,
  ): { added: Promise<void>; outcome: Promise<ToolCallOutcome> } {
    const { entry, created } = this.attach(request, data);
    // The same call dispatched twice in this process (a re-run racing the original) shares one wait.
    if (!created) return { added: Promise.resolve(), outcome: entry.promise };
    return { added: this.add(entry, retry, delayMs), outcome: entry.promise };
  }

  /**
   * This process's one wait for a call's outcome: the entry already waiting for it, or a new one that
   * listens for its outcome notice (before anything is added or read, so a call that settles at once is
   * not missed).
   */
  private attach(request: ToolCallRequest, data: ToolCallJob): { entry: Pending; created: boolean } {
    const queue = this.queueFor(request.server);
    const bullId = toolCallJobId(request.jobId, request.toolCallId);
    const key = OutcomeListener.key(queue.name, bullId);
    const existing = this.pending.get(key);
    if (existing) return { entry: existing, created: false };

    let resolve: (outcome: ToolCallOutcome) => void = () => undefined;
    const promise = new Promise<ToolCallOutcome>((settle) => {
      resolve = settle;
    });
    const entry: Pending = {
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
    this.pending.set(key, entry);
    entry.cleanup.push(
      this.listener.on(queue.name, bullId, (notice) =>
        this.guard(entry, 'outcome notice', this.onNotice(entry, notice)),
      ),
    );
    return { entry, created: true };
  }

  private async add(
    entry: Pending,
    retry: { attempts: number; backoffMs: number },
    delayMs: number,
  ): Promise<void> {
    let queued: boolean;
    let failure = '';
    try {
      // Same id → BullMQ returns the existing job instead of adding: a re-run never executes twice.
      const priority = await this.fairShare.enter(
        entry.data.server,
        teamOf(entry.data),
        entry.bullId,
        entry.data.deadline,
      );
      entry.inLine = priority !== undefined;
      const job = await entry.queue.add('call', entry.data, {
        jobId: entry.bullId,
        ...(priority !== undefined ? { priority } : {}),
        attempts: retry.attempts,
        backoff: { type: 'exponential', delay: retry.backoffMs },
        // Kept so a resumed run re-dispatching this id finds it instead of running it again (toolCalls).
        ...toolCallJobRetention(this.options.config.toolCalls),
        ...(delayMs > 0 ? { delay: delayMs } : {}),
      });
      if (job.data && (job.data as ToolCallJob).enqueuedAt !== entry.data.enqueuedAt) {
        // An earlier run added this call: wait for that job, with its own deadline.
        entry.data = ToolCallJobSchema.parse(job.data);
      }
      queued = true;
    } catch (error) {
      failure = (error as Error)?.message ?? String(error);
      this.report(entry, 'queue.add failed', error);
      // The add may have reached Redis before it failed (e.g. the connection dropped after sending it):
      // only a job known to be absent proves the call was never queued.
      queued = await this.probeQueued(entry);
    }
    if (!queued) {
      this.settle(entry, localOutcome(entry.data, 'unavailable', `The call could not be queued: ${failure}`));
      return;
    }
    await this.watch(entry);
  }

  /** The call is queued and may run: from here on only its job, the deadline or a cancel settles it. */
  private async watch(entry: Pending): Promise<void> {
    entry.queued = true;
    const untilDeadline = Math.max(0, entry.data.deadline - Date.now()) + 50;
    const timer = setTimeout(
      () => this.guard(entry, 'deadline check', this.onDeadline(entry)),
      untilDeadline,
    );
    entry.cleanup.push(() => clearTimeout(timer));
    // A failed first look is repeated by the reconcile rounds.
    await this.check(entry).catch((error: unknown) => this.report(entry, 'state check failed', error));
  }

  /** After a failed add: false only when Redis answers that the job does not exist. */
  private async probeQueued(entry: Pending): Promise<boolean> {
    try {
      // Sent on the same connection after the add, so Redis has run the add (if it got it) first.
      return (await entry.queue.getJob(entry.bullId)) !== undefined;
    } catch (error) {
      this.report(entry, 'could not tell whether the call was queued', error);
      return true;
    }
  }

  /** Runs a background step of one call; a failure is reported with the call's context, never thrown. */
  private guard(entry: Pending, step: string, work: Promise<void>): void {
    work.catch((error: unknown) => this.report(entry, step, error));
  }

  private report(entry: Pending, step: string, error: unknown): void {
    const { server, tool, jobId, toolCallId, trace } = entry.data;
    const traceId = traceIdOf(trace);
    this.options.onError?.(
      new DispatchError(
        `${step} for ${server}__${tool} (job ${jobId}, call ${toolCallId}${traceId ? `, trace ${traceId}` : ''}): ${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      ),
    );
  }

  private async onNotice(entry: Pending, notice: SettledNotice): Promise<void> {
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
  private async check(entry: Pending): Promise<void> {
    if (entry.settled) return;
    const job = (await entry.queue.getJob(entry.bullId)) as Job | undefined;
    if (entry.settled) return;
    if (!job) {
      this.settle(
        entry,
        localOutcome(
          entry.data,
          'failed',
          'The call was lost: its queue entry disappeared.',
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
  private async onDeadline(entry: Pending): Promise<void> {
    if (entry.settled) return;
    if (await this.removeIfNotStarted(entry)) {
      // The call is gone from its queue either way; the catalog only picks the better explanation.
      const ready = await this.options.catalog.availability(entry.data.server).then(
        (availability) => availability === 'ready',
        () => true,
      );
      this.settle(
        entry,
        ready
          ? localOutcome(
              entry.data,
              'expired',
              `The call waited in the queue of ${entry.data.server} past its deadline and was not run.`,
            )
          : localOutcome(
              entry.data,
              'unavailable',
              `No worker had a ready session to ${entry.data.server} before the deadline; the call was not run.`,
            ),
      );
    } else {
      await this.check(entry);
    }
  }

  private async removeIfNotStarted(entry: Pending): Promise<boolean> {
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
    const due = [...this.pending.entries()]
      .filter(([, entry]) => entry.queued && entry.since < cutoff)
      .slice(0, RECONCILE_BATCH);
    for (const [key, entry] of due) {
      // Past its deadline, the deadline step is repeated too, in case its own run failed on Redis.
      const step = Date.now() > entry.data.deadline + 50 ? this.onDeadline(entry) : this.check(entry);
      await step.catch((error: unknown) => this.report(entry, 'reconcile', error));
      if (!entry.settled && this.pending.delete(key)) this.pending.set(key, entry);
    }
  }

  private settle(entry: Pending, outcome: ToolCallOutcome): void {
    if (entry.settled) return;
    entry.settled = true;
    this.pending.delete(OutcomeListener.key(entry.queue.name, entry.bullId));
    for (const cleanup of entry.cleanup) cleanup();
    if (entry.inLine) {
      this.fairShare
        .leave(entry.data.server, teamOf(entry.data), entry.bullId)
        .catch((error: unknown) => this.report(entry, 'leaving the team line failed', error));
    }
    entry.resolve(outcome);
  }
}

/** The team a call is dispatched for; calls without one share a line. */
function teamOf(data: ToolCallJob): string {
  return data.team ?? data.labels.team ?? '';
}

/** The outcome recorded on a finished job, or the failure BullMQ recorded when our processor could not (also read by the gateway's orphan sweep). */
export function settledOutcome(job: Job, data: ToolCallJob): ToolCallOutcome | undefined {
  if (job.finishedOn === undefined) return undefined;
  const recorded = ToolCallOutcomeSchema.safeParse(job.returnvalue);
  if (recorded.success) return recorded.data;
  if (!job.failedReason) {
    // Finished for good with a value we cannot read: waiting longer would never settle it.
    const problem = recorded.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    return localOutcome(
      data,
      'failed',
      `The call finished but its recorded outcome is unreadable (${problem}); whether it ran is unknown.`,
      'unreadable_outcome',
      'unknown',
    );
  }
  // BullMQ failed the job itself (e.g. stalled too often): a non-idempotent call may have run.
  const status: OutcomeStatus = data.idempotent ? 'failed' : 'indeterminate';
  return localOutcome(
    data,
    status,
    `The call failed in the queue: ${job.failedReason}`,
    job.failedReason,
    'unknown',
  );
}

/** A notice's JSON, or undefined when it is not JSON (the job itself is then read instead). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
