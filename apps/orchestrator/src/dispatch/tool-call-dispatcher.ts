import {
  ArgumentValidator,
  carrierFrom,
  isIdempotent,
  type OutcomeStatus,
  redisKeys,
  type SwitchyardConfig,
  type ToolCallCancel,
  type ToolCallJob,
  ToolCallJobSchema,
  type ToolCallOutcome,
  ToolCallOutcomeSchema,
  type TraceCarrier,
  toolCallJobId,
  toolQueueName,
  traceIdOf,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import { type Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { CatalogReader } from '../catalog/catalog-reader.ts';
import { inSpan, SpanKind } from '../telemetry/spans.ts';
import { localOutcome } from './local-outcome.ts';
import { OutcomeListener, type SettledNotice } from './outcome-listener.ts';

export interface ToolCallRequest {
  jobId: string;
  toolCallId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  trace?: TraceCarrier;
  labels?: Record<string, string>;
  /** Overrides the server's queueTimeoutMs: how long the call may wait for a worker. */
  queueTimeoutMs?: number;
}

export interface DispatcherOptions {
  config: SwitchyardConfig;
  prefix: string;
  /** Shared connection for queue commands; BullMQ reuses it for every server's Queue. */
  redis: Redis;
  catalog: CatalogReader;
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
  cleanup: Array<() => void>;
}

const KEEP_COMPLETED_SECONDS = 24 * 3600;
const RECONCILE_BATCH = 200;
const NOT_STARTED_STATES = new Set(['waiting', 'delayed', 'prioritized', 'wait', 'paused']);

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
  private readonly listener: OutcomeListener;
  private reconcileTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DispatcherOptions) {
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
      labels: request.labels ?? {},
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
        const started = this.enqueueAndWait(request, data, server.retry);
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
  async cancel(jobId: string, reason = 'the job was cancelled'): Promise<number> {
    const entries = [...this.pending.values()].filter((candidate) => candidate.request.jobId === jobId);
    // Workers hear the cancel first, so a call one of them takes while we remove the others is refused
    // before it is sent instead of running (one by one, removal would chase a fast worker down the queue).
    await Promise.all(entries.map((entry) => this.requestCancel(entry, reason)));
    const removed = await Promise.all(entries.map((entry) => this.removeIfNotStarted(entry)));
    entries.forEach((entry, index) => {
      if (removed[index]) {
        this.settle(
          entry,
          localOutcome(entry.data, 'cancelled', 'The job was cancelled before this call ran.'),
        );
      }
    });
    return removed.filter(Boolean).length;
  }

  /** Asks whichever worker runs the call to abort it (one PUBLISH on the deployment's cancel channel). */
  private async requestCancel(entry: Pending, reason: string): Promise<void> {
    const request: ToolCallCancel = { queue: entry.queue.name, id: entry.bullId, reason };
    try {
      await this.options.redis.publish(redisKeys.cancels(this.options.prefix), JSON.stringify(request));
    } catch (error) {
      // The call then finishes on its own, with its real outcome.
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
  ): { added: Promise<void>; outcome: Promise<ToolCallOutcome> } {
    const queue = this.queueFor(request.server);
    const bullId = toolCallJobId(request.jobId, request.toolCallId);
    const key = OutcomeListener.key(queue.name, bullId);
    // The same call dispatched twice in this process (a re-run racing the original) shares one wait.
    const existing = this.pending.get(key);
    if (existing) return { added: Promise.resolve(), outcome: existing.promise };

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
      cleanup: [],
    };
    this.pending.set(key, entry);
    // Listen before adding, so a call that settles at once is not missed.
    entry.cleanup.push(
      this.listener.on(queue.name, bullId, (notice) =>
        this.guard(entry, 'outcome notice', this.onNotice(entry, notice)),
      ),
    );
    return { added: this.add(entry, retry), outcome: promise };
  }

  private async add(entry: Pending, retry: { attempts: number; backoffMs: number }): Promise<void> {
    let queued: boolean;
    let failure = '';
    try {
      // Same id → BullMQ returns the existing job instead of adding: a re-run never executes twice.
      const job = await entry.queue.add('call', entry.data, {
        jobId: entry.bullId,
        attempts: retry.attempts,
        backoff: { type: 'exponential', delay: retry.backoffMs },
        removeOnComplete: { age: KEEP_COMPLETED_SECONDS },
        removeOnFail: { age: 7 * KEEP_COMPLETED_SECONDS },
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
    // The call is queued and may run: from here on only its job, the deadline or a cancel settles it.
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
    entry.resolve(outcome);
  }
}

/** The outcome recorded on a finished job, or the failure BullMQ recorded when our processor could not. */
function settledOutcome(job: Job, data: ToolCallJob): ToolCallOutcome | undefined {
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
