import { setTimeout as delay } from 'node:timers/promises';
import {
  ArgumentValidator,
  type Clock,
  carrierFrom,
  isDependencyOutage,
  ServerClock,
  type Store,
  type SwitchyardConfig,
  type ToolCallJob,
  ToolCallJobSchema,
  type ToolCallOutcome,
  toolCallJobId,
  toolCallJobRetention,
  toolQueueName,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import type { Job, Queue } from 'bullmq';
import type { CatalogReader } from '../catalog/catalog-reader.ts';
import { inSettlingSpan, SpanKind } from '../telemetry/spans.ts';
import { admitCall, queueTimeoutMs } from './call-admission.ts';
import { type CallToCancel, publishCancels } from './cancel-requests.ts';
import { FairShare } from './fair-share.ts';
import { localOutcome } from './local-outcome.ts';
import { OutcomeListener } from './outcome-listener.ts';
import { type PendingCall, PendingCalls } from './pending-calls.ts';
import { settledOutcome } from './settled-outcome.ts';
import { DispatchError, JOB_CANCELLED, type ToolCallRequest, teamOf } from './tool-call-request.ts';
import { ToolQueues } from './tool-queues.ts';

/** Pauses between adds while the queue store is out of reach: from the first to the longest. */
const OUTAGE_RETRY_FIRST_MS = 100;
const OUTAGE_RETRY_MAX_MS = 1_000;
/** How many of a server's prioritized calls a scrape reads to find the one waiting longest. */
const OLDEST_WAITING_SCAN = 25;

export interface DispatcherOptions {
  config: SwitchyardConfig;
  prefix: string;
  /** The queue store: on Redis, BullMQ reuses its shared connection for every server's Queue. */
  store: Store;
  catalog: CatalogReader;
  /**
   * How long (ms) a call must wait before it may run (a team's callsPerMinute); it is queued with that
   * BullMQ delay and its queue deadline moves by as much. Absent: no call waits.
   */
  pace?: (request: ToolCallRequest) => Promise<number>;
  /** How often calls still pending are checked against their job, in case a notification was lost. */
  reconcileEveryMs?: number;
  onError?: (error: unknown) => void;
  /**
   * The clock a call's enqueuedAt and deadline are stamped on: Redis's (TIME), which workers judge them on
   * too, so no host's own clock matters (docs/semantics.md §6). Default: the store's ServerClock.
   */
  clock?: Clock;
}

/**
 * The producer side of the tool fleet (docs/architecture.md §3, step 3): admits a call against the
 * catalog (call-admission.ts), adds it to its server's queue under a deterministic job id, and
 * resolves with its one outcome (pending-calls.ts). Awaiting uses one stream reader for all servers,
 * so the process holds two Redis connections whatever the number of servers: the shared command
 * connection and the reader's blocking one.
 */
export class ToolCallDispatcher {
  private readonly queues: ToolQueues;
  private readonly pending: PendingCalls;
  private readonly validator = new ArgumentValidator();
  private readonly fairShare: FairShare;
  private readonly onError: (error: unknown) => void;
  private readonly clock: Clock;
  /** Set when this dispatcher measures its own clock (no `clock` option): started and stopped with it. */
  private readonly ownClock: ServerClock | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.onError = (error) => options.onError?.(error);
    this.ownClock = options.clock ? undefined : ServerClock.of(options.store, { onError: this.onError });
    this.clock = options.clock ?? (this.ownClock as ServerClock);
    this.fairShare = new FairShare(options.store, options.config, this.clock);
    this.queues = new ToolQueues(options.store, this.onError);
    this.pending = new PendingCalls({
      listener: new OutcomeListener(options.store, this.onError),
      fairShare: this.fairShare,
      catalog: options.catalog,
      onError: this.onError,
      requeue: (call) => this.requeue(call),
      clock: this.clock,
    });
  }

  async start(): Promise<void> {
    // Until the first measurement the clock is this host's own; a Redis that is down now is reported.
    await this.ownClock?.sync().catch(this.onError);
    this.ownClock?.start();
    await this.pending.start(this.options.reconcileEveryMs ?? 5_000);
  }

  async close(): Promise<void> {
    this.ownClock?.stop();
    await this.pending.stop();
    await this.queues.close();
  }

  /** Dispatches one call and resolves with its outcome. Never rejects for a call-level failure. */
  async dispatch(request: ToolCallRequest): Promise<ToolCallOutcome> {
    const { config, catalog } = this.options;
    const admission = await admitCall(request, {
      config,
      catalog,
      validator: this.validator,
      now: this.clock.now(),
    });
    if ('refused' in admission) return admission.refused;
    const data = admission.admitted;
    const { retry } = admission.server;
    const delayMs = (await this.options.pace?.(request)) ?? 0;
    data.deadline += delayMs;
    const queue = toolQueueName(request.server);
    // The producer span: the worker's "process" span is its child through the context in the job data.
    // It ends when the job is added, and carries the call's outcome once that arrives.
    const { value: started, settling } = await inSettlingSpan(
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
        const started = this.enqueueAndWait(request, data, retry, delayMs);
        await started.added;
        return started;
      },
    );
    return started.outcome.then(
      (outcome) => {
        settling.settle(outcome.status, outcome.error);
        return outcome;
      },
      (error: unknown) => {
        settling.settle('failed', (error as Error).message);
        throw error;
      },
    );
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
    const entries = this.pending.ofJob(jobId);
    // Workers hear the cancel first, so a call one of them takes while we remove the others is refused
    // before it is sent instead of running (one by one, removal would chase a fast worker down the queue).
    await this.requestCancels(
      entries.map((entry) => ({ queue: entry.queue.name, id: entry.bullId })),
      reason,
    );
    return this.pending.removeQueued(entries, reason);
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
    // Heard first, as in cancel(): a worker taking the call from now on refuses it unsent, including
    // one the earlier run adds late (a replica frozen between its lease check and the add, §4).
    if (!options.refused) {
      const queue = this.queues.of(request.server).name;
      await this.requestCancels([{ queue, id: toolCallJobId(request.jobId, request.toolCallId) }], reason);
    }
    const existing = await this.attachExisting(request);
    if (!existing || 'finished' in existing) return existing?.finished;
    await this.pending.removeQueued([existing.entry], reason);
    return existing.entry.promise;
  }

  /**
   * Waits for a call an earlier run queued, as dispatch() would, but never adds a job: its outcome, or
   * `undefined` when its queue job is gone. A re-run follows the job it found this way: were it to add
   * under the same id instead, a job Redis lost after the look would come back as a new one and run a
   * second time (docs/semantics.md §18); followed, its loss is judged as a lost job (pending-calls).
   */
  async follow(request: ToolCallRequest): Promise<ToolCallOutcome | undefined> {
    const existing = await this.attachExisting(request);
    if (!existing) return undefined;
    return 'finished' in existing ? existing.finished : existing.entry.promise;
  }

  /**
   * The queue job of a call an earlier run queued: the outcome recorded on it when it finished, else this
   * process's wait for it (made and watched like a dispatched call's); undefined when there is no job.
   */
  private async attachExisting(
    request: ToolCallRequest,
  ): Promise<{ finished: ToolCallOutcome } | { entry: PendingCall } | undefined> {
    const queue = this.queues.of(request.server);
    const bullId = toolCallJobId(request.jobId, request.toolCallId);
    const pending = this.pending.get(queue, bullId);
    if (pending) return { entry: pending };
    const job = (await queue.getJob(bullId)) as Job | undefined;
    if (!job) return undefined;
    const parsed = ToolCallJobSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new DispatchError(
        `queue job ${bullId} of ${request.server}__${request.tool} (job ${request.jobId}, call ${request.toolCallId}) has unreadable data: ${parsed.error.message}`,
      );
    }
    const finished = settledOutcome(job, parsed.data);
    if (finished) return { finished };
    const { entry, created } = this.pending.attach(request, parsed.data, queue, bullId);
    if (created) {
      // The earlier run put the call in its team's line; whoever settles it takes it out.
      entry.inLine = true;
      // The same watch as a dispatched call's: deadline, first look, then the reconcile rounds.
      await this.pending.watch(entry);
    }
    return { entry };
  }

  /** Queue depth of one server, for operators (GET /v1/servers, metrics). */
  async queueCounts(server: string): Promise<Record<string, number>> {
    return this.queues
      .of(server)
      .getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed');
  }

  /**
   * When the longest-waiting call on a server's queue became ready to run (epoch ms), or undefined when
   * none waits. Bounded: the oldest of the arrival-order list and the next OLDEST_WAITING_SCAN of the
   * prioritized set (fair share: every team's first call in line is near its front). A call delayed
   * (a quota, a retry's backoff) waits from the end of its delay.
   */
  async oldestWaitingSince(server: string): Promise<number | undefined> {
    const queue = this.queues.of(server);
    const [waiting, prioritized] = await Promise.all([
      queue.getJobs(['waiting'], 0, 0, true),
      queue.getJobs(['prioritized'], 0, OLDEST_WAITING_SCAN - 1, true),
    ]);
    const since = [...waiting, ...prioritized].map((job) => job.timestamp + (job.delay ?? 0));
    return since.length > 0 ? Math.min(...since) : undefined;
  }

  /** The BullMQ queue of one server (sharing this dispatcher's connection), e.g. for a dashboard. */
  queue(server: string): Queue {
    return this.queues.of(server);
  }

  private requestCancels(calls: CallToCancel[], reason: string): Promise<void> {
    return publishCancels(this.options.store, calls, reason, this.onError);
  }

  /** Adds the call and returns both the add (for the producer span) and the awaited outcome. */
  private enqueueAndWait(
    request: ToolCallRequest,
    data: ToolCallJob,
    retry: { attempts: number; backoffMs: number },
    delayMs: number,
  ): { added: Promise<void>; outcome: Promise<ToolCallOutcome> } {
    const queue = this.queues.of(request.server);
    const { entry, created } = this.pending.attach(
      request,
      data,
      queue,
      toolCallJobId(request.jobId, request.toolCallId),
    );
    // The same call dispatched twice in this process (a re-run racing the original) shares one wait.
    if (!created) return { added: Promise.resolve(), outcome: entry.promise };
    return { added: this.add(entry, retry, delayMs), outcome: entry.promise };
  }

  private async add(
    entry: PendingCall,
    retry: { attempts: number; backoffMs: number },
    delayMs: number,
  ): Promise<void> {
    let queued = false;
    let failure = '';
    for (let pauseMs = OUTAGE_RETRY_FIRST_MS; ; pauseMs = Math.min(pauseMs * 2, OUTAGE_RETRY_MAX_MS)) {
      try {
        await this.addOnce(entry, retry, delayMs);
        queued = true;
        break;
      } catch (error) {
        failure = (error as Error)?.message ?? String(error);
        this.pending.report(entry, 'queue.add failed', error);
        // The queue store out of reach (a restart, a failover): tried again until the call's queue deadline,
        // as ioredis's offline queue does on Redis; an add under the same id never makes a second job.
        if (isDependencyOutage(error) && !entry.settled && this.clock.now() + pauseMs < entry.data.deadline) {
          await delay(pauseMs);
          continue;
        }
        // The add may have reached the store before it failed (e.g. the connection dropped after sending
        // it): only a job known to be absent proves the call was never queued.
        queued = await this.probeQueued(entry);
        break;
      }
    }
    if (!queued) {
      this.pending.settle(
        entry,
        localOutcome(entry.data, 'unavailable', `The call could not be queued: ${failure}`),
      );
      return;
    }
    await this.pending.watch(entry);
  }

  private async addOnce(
    entry: PendingCall,
    retry: { attempts: number; backoffMs: number },
    delayMs: number,
  ): Promise<void> {
    const priority = await this.fairShare.enter(
      entry.data.server,
      teamOf(entry.data),
      entry.bullId,
      entry.data.deadline,
    );
    entry.inLine = priority !== undefined;
    // Same id → BullMQ returns the existing job instead of adding: a re-run never executes twice.
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
  }

  /** An idempotent call whose queue job vanished after its add (Redis lost its data) is added again. */
  private async requeue(entry: PendingCall): Promise<void> {
    const server = this.options.config.servers[entry.data.server];
    // A fresh queue deadline, on the clock every deadline is on: the lost job may have run, so it must not
    // come back `expired` (executed no).
    entry.data = { ...entry.data, deadline: this.clock.now() + queueTimeoutMs(entry.request, server) };
    await this.add(entry, server?.retry ?? { attempts: 1, backoffMs: 1_000 }, 0);
  }

  /** After a failed add: false only when Redis answers that the job does not exist. */
  private async probeQueued(entry: PendingCall): Promise<boolean> {
    try {
      // Sent on the same connection after the add, so Redis has run the add (if it got it) first.
      return (await entry.queue.getJob(entry.bullId)) !== undefined;
    } catch (error) {
      this.pending.report(entry, 'could not tell whether the call was queued', error);
      return true;
    }
  }
}
