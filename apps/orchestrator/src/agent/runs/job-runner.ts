import type { AIMessage } from '@langchain/core/messages';
import { type BaseCheckpointSaver, Command } from '@langchain/langgraph';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { contextFrom, type SwitchyardConfig, type ToolCallOutcome } from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import pLimit from 'p-limit';
import { TeamsService } from '../../auth/teams.service.ts';
import { ModelToolCatalog, type ToolFilter } from '../../catalog/model-tool-catalog.ts';
import { CHECKPOINTER } from '../../checkpoints/checkpointer.ts';
import { ToolCallDispatcher } from '../../dispatch/tool-call-dispatcher.ts';
import { JOB_CANCELLED } from '../../dispatch/tool-call-request.ts';
import { InputStore } from '../../jobs/input-store.ts';
import { JobEndings } from '../../jobs/job-endings.ts';
import { JobEvents } from '../../jobs/job-events.ts';
import type { AgentJobRequest, BatchJobRequest, EndStatus } from '../../jobs/job-request.ts';
import { type JobRecord, JobStore } from '../../jobs/job-store.ts';
import {
  createChatModel,
  ModelConfigError,
  modelSettings,
  scrubSecret,
  settingsSecret,
  TeamModelsRegistry,
} from '../../models/index.ts';
import { messageText } from '../../models/message-text.ts';
import type { Logger } from '../../runtime/logger.ts';
import { CONFIG, LOGGER } from '../../runtime/tokens.ts';
import { inSpan } from '../../telemetry/spans.ts';
import type { CallContext } from '../../tool-calls/call-context.ts';
import { LeaseLostError, type RunLease, raceSignal, UNCONTESTED_LEASE } from '../../tool-calls/call-lease.ts';
import type { CallWait } from '../../tool-calls/call-wait.ts';
import { ToolCallLifeCycle } from '../../tool-calls/tool-call-life-cycle.ts';
import { buildAgentGraph } from '../graph/agent-graph.ts';
import { initialMessages } from '../graph/initial-messages.ts';
import { RunLimitError } from '../graph/run-limit-error.ts';
import { toFunctionTools } from '../graph/tool-definitions.ts';
import { toToolMessage } from '../graph/tool-message.ts';
import { FencedCheckpointer } from './fenced-checkpointer.ts';
import { ModelCallError } from './model-call-error.ts';
import { inModelSpan } from './model-span.ts';

/** Tool calls of one batch in flight at once: enough to keep every server's queue busy. */
const BATCH_IN_FLIGHT = 200;

/**
 * How a run left this replica: ended (or handed over), or parked waiting for a person until `wakeAt`
 * (the earliest expiry of what it waits for, never past the deadline). A parked run holds no lock,
 * no slot and no memory: the consumer puts its BullMQ job back as delayed until then, and an answer
 * promotes it at once (docs/semantics.md §14).
 */
export type RunExit = { parked: false } | { parked: true; wakeAt: number; waits: CallWait[] };

/** The parked run stops its graph here: thrown through runAgent, caught in runJob. */
class RunParked extends Error {
  constructor(readonly waits: CallWait[]) {
    super('the run waits for a person');
  }
}

/**
 * Runs one job to its end on this replica. It may be the second replica to run it (the first died):
 * the agent resumes from its last checkpoint and recorded tool calls are never executed again.
 * Failures that are the job's own (limits, deadline, the model) end the job `failed`; infrastructure
 * failures are thrown, so BullMQ retries the run.
 */
@Injectable()
export class JobRunner implements OnModuleInit {
  /** Cancel switches of the runs on this replica (two, briefly, when a run came back to it). */
  private readonly running = new Map<string, Set<AbortController>>();

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(JobEndings) private readonly endings: JobEndings,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(ToolCallLifeCycle) private readonly calls: ToolCallLifeCycle,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(CHECKPOINTER) private readonly checkpointer: BaseCheckpointSaver,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(LOGGER) private readonly log: Logger,
    @Inject(TeamModelsRegistry) private readonly models: TeamModelsRegistry,
  ) {}

  onModuleInit(): void {
    this.events.onCancel((jobId) => {
      // The runs are already aborted when this fails; their calls then end on their own.
      this.stopLocal(jobId).catch((error: unknown) =>
        this.log.error({ job_id: jobId, err: error }, 'cancelling the calls of a job failed'),
      );
    });
  }

  get activeRuns(): number {
    return this.running.size;
  }

  /** Whether this replica runs the job now (a run whose lock is being lost still counts until it stops). */
  isRunningHere(jobId: string): boolean {
    return this.running.has(jobId);
  }

  /** `lease` is this replica's hold on the run; a run lost to another replica stops without a trace. */
  async run(jobId: string, replicaId: string, lease: RunLease = UNCONTESTED_LEASE): Promise<RunExit> {
    const job = await this.start(jobId, replicaId);
    if (!job) {
      // Cancelled before it started, or already finished by an earlier attempt.
      await this.settleCallsLeftOpen(jobId);
      return { parked: false };
    }
    // The run joins the trace of the request that submitted the job, whichever replica runs it.
    const agent = job.kind === 'agent';
    return inSpan(
      agent ? 'invoke_agent switchyard' : 'run_batch switchyard',
      {
        parent: contextFrom({ traceparent: job.traceparent }),
        attributes: {
          [ATTR.GEN_AI_OPERATION_NAME]: agent ? 'invoke_agent' : 'execute_tool',
          [ATTR.GEN_AI_AGENT_NAME]: 'switchyard',
          [ATTR.GEN_AI_CONVERSATION_ID]: job.id,
          [ATTR.JOB_ID]: job.id,
          [ATTR.JOB_KIND]: job.kind,
          [ATTR.TEAM]: job.team,
          [ATTR.REPLICA]: replicaId,
        },
      },
      () => this.runJob(job, lease),
    );
  }

  /**
   * Moves the job to `running` and stores its `status` event in the same statement (one round trip per
   * run start); undefined when it had already ended.
   */
  private async start(jobId: string, replicaId: string): Promise<JobRecord | undefined> {
    const started: { job?: JobRecord } = {};
    await this.events.publishWith(
      jobId,
      'status',
      { status: 'running', replica: replicaId },
      async (event) => {
        started.job = await this.store.markRunning(jobId, event);
        return started.job !== undefined;
      },
    );
    return started.job;
  }

  /**
   * A job cancelled while no replica ran it (the one running it was killed or frozen) may hold calls
   * that run dispatched: they are settled from their queue jobs, so a queued one never starts and each
   * gets a true outcome (docs/semantics.md §6).
   */
  private async settleCallsLeftOpen(jobId: string): Promise<void> {
    const job = await this.store.get(jobId);
    if (job?.status !== 'cancelled') return;
    const settled = await this.calls.settleLeftOpen(job, JOB_CANCELLED);
    if (settled > 0)
      this.log.info({ job_id: jobId, calls: settled }, 'settled the calls a cancelled job left open');
  }

  private async runJob(job: JobRecord, lease: RunLease): Promise<RunExit> {
    // trace_id and span_id come from the active span (see runtime/logger.ts).
    const log = this.log.child({ job_id: job.id, team: job.team });
    log.info({ kind: job.kind }, 'run started');

    const controller = new AbortController();
    const controllers = this.running.get(job.id) ?? new Set();
    this.running.set(job.id, controllers.add(controller));
    // Gateway (`mcp`) jobs never reach the run queue: the /mcp request that made them runs them.
    const limits = job.request.kind === 'mcp' ? undefined : job.request.limits;
    const { defaultLimits, maxDeadlineMs } = this.config.orchestrator;
    // Capped even for a job accepted under a larger maxDeadlineMs: every run must end before the finished
    // calls it could look up again leave Redis (toolCalls.keepCompletedSeconds, docs/semantics.md §2).
    const deadlineMs = Math.min(limits?.deadlineMs ?? defaultLimits.deadlineMs, maxDeadlineMs);
    const startedAt = (job.startedAt ?? new Date()).getTime();
    const deadline = AbortSignal.timeout(Math.max(1, startedAt + deadlineMs - Date.now()));
    const cancel = AbortSignal.any([controller.signal, deadline]);
    // The reason reaches the worker, whose outcome then says which limit ended the call.
    const deadlineReason = `the job's deadlineMs of ${deadlineMs} ms passed`;
    if (Date.now() >= startedAt + deadlineMs) {
      // Resumed past its deadline (its replica died or froze): what the earlier run left open is settled
      // from the queue first, all cancels published at once, before the run ends (docs/semantics.md §6).
      const settled = await this.calls.settleLeftOpen(job, deadlineReason);
      if (settled > 0) log.info({ calls: settled }, 'settled the calls a run past its deadline left open');
    }
    const context: CallContext = {
      job,
      filters: this.filtersFor(job),
      cancel,
      cancelReason: () => (controller.signal.aborted ? JOB_CANCELLED : deadlineReason),
      lease,
      stop: AbortSignal.any([cancel, lease.signal]),
      log,
      deadlineAt: startedAt + deadlineMs,
      waits: { approval: job.kind === 'agent', question: job.kind === 'agent' },
      // run() made the run span the active one.
      span: trace.getActiveSpan(),
    };
    try {
      const result =
        job.request.kind === 'agent'
          ? await this.runAgent(context, job.request)
          : job.request.kind === 'batch'
            ? await this.runBatch(context, job.request)
            : undefined;
      // Only the replica holding the run ends it.
      await lease.confirm();
      // A batch succeeded only when every call ended `ok` (docs/semantics.md §17).
      const status =
        result === undefined || typeof result === 'string' || allOk(result.outcomes)
          ? 'succeeded'
          : 'completed_with_errors';
      await this.end(job, status, result);
      lease.ended();
      log.info({ status }, 'run ended');
      return { parked: false };
    } catch (error) {
      if (error instanceof RunParked && !lease.signal.aborted && !cancel.aborted) {
        const wakeAt = Math.min(context.deadlineAt, ...error.waits.map((wait) => wait.expiresAt));
        return { parked: true, wakeAt, waits: error.waits };
      }
      if (lease.signal.aborted || error instanceof LeaseLostError) {
        // Not ours to finish, fail or cancel any more: the replica holding the lock resumes the run
        // and settles every call this one left open. Nothing was recorded for those here.
        log.warn({ err: error }, 'run handed over after a lost lock; stopped here');
        throw error;
      }
      if (controller.signal.aborted) {
        await this.dispatcher.cancel(job.id);
        log.info('run stopped: job cancelled');
      } else if (deadline.aborted) {
        await this.dispatcher.cancel(job.id, deadlineReason);
        // What the run waited for a person on expires with it.
        await this.inputs.expireAll(job.id);
        await this.end(job, 'failed', undefined, `the job ran past its deadline (${deadlineMs} ms)`);
      } else if (error instanceof RunLimitError || error instanceof ModelCallError) {
        await this.end(job, 'failed', undefined, error.message);
        log.warn({ err: error }, 'run failed');
      } else {
        log.error({ err: error }, 'run interrupted; BullMQ will retry it');
        throw error;
      }
      lease.ended();
      return { parked: false };
    } finally {
      controllers.delete(controller);
      if (controllers.size === 0 && this.running.get(job.id) === controllers) this.running.delete(job.id);
    }
  }

  /** Called by the consumer once the run is parked (job `input_required`, its run delayed). */
  async announceParked(jobId: string, exit: Extract<RunExit, { parked: true }>): Promise<void> {
    const waits = exit.waits.map(({ kind, toolCallId, server, tool }) => ({
      kind,
      toolCallId,
      server,
      tool,
    }));
    await this.events.publish(jobId, 'status', { status: 'input_required', waits });
    this.log.info(
      { job_id: jobId, waits, wake_at: new Date(exit.wakeAt).toISOString() },
      'run parked: waiting for a person',
    );
  }

  /** Called by the consumer when BullMQ gives up on a run: the job must not stay `running` forever. */
  async giveUp(jobId: string, reason: string): Promise<void> {
    const job = await this.store.get(jobId);
    if (job) await this.end(job, 'failed', undefined, `the run failed repeatedly: ${reason}`);
  }

  private async end(job: JobRecord, status: EndStatus, result: unknown, error?: string): Promise<void> {
    await this.endings.end(job, status, result, error);
  }

  private async stopLocal(jobId: string): Promise<void> {
    const controllers = this.running.get(jobId);
    if (!controllers) return;
    for (const controller of controllers) controller.abort(new Error('job cancelled'));
    // Queued calls are removed and end `cancelled` (executed no); running ones are cancelled on their
    // workers (notifications/cancelled) and report what really happened (executed unknown, or the result).
    await this.dispatcher.cancel(jobId);
  }

  private filtersFor(job: JobRecord): ToolFilter[] {
    const team = this.teams.byName(job.team);
    // A team removed from the config since the job was submitted keeps no tools.
    const teamFilter = team?.config.tools ?? { allow: [], deny: [] };
    const requested = job.request.kind === 'agent' ? job.request.tools : undefined;
    return [teamFilter, { allow: requested?.allow ?? ['*'], deny: requested?.deny ?? [] }];
  }

  private async runBatch(context: CallContext, request: BatchJobRequest) {
    const limit = pLimit(BATCH_IN_FLIGHT);
    const all = Promise.all(
      request.calls.map((call, position) =>
        limit(async () => {
          const outcome = await this.calls.execute(context, {
            id: `call-${position + 1}`,
            name: call.tool,
            args: call.arguments,
            position,
          });
          // A batch never parks (it waits for nobody): its calls end with an outcome.
          if (!('status' in outcome)) throw new Error(`batch call ${position + 1} tried to wait`);
          return outcome;
        }),
      ),
    );
    // A cancel or the deadline ends the run now, even if a call never answers; the calls already
    // started still record their own outcomes (queued ones end `cancelled`).
    const outcomes = await raceSignal(all, context.stop, () => new Error('the run was stopped'));
    return { calls: outcomes.length, outcomes: countStatuses(outcomes) };
  }

  private async runAgent(context: CallContext, request: AgentJobRequest): Promise<string> {
    const spec = request.model;
    if (!spec) throw new ModelCallError('the job has no model');
    // The keys of the job's team, as of now: the config was checked at submit, but may have changed since.
    let settings: ReturnType<typeof modelSettings>;
    try {
      settings = modelSettings(spec, this.models.forTeam(context.job.team));
    } catch (error) {
      if (error instanceof ModelConfigError)
        throw new ModelCallError(`the model cannot be used: ${error.message}`);
      throw error;
    }
    const secret = settingsSecret(settings);
    const model = await createChatModel(settings);
    const defaults = this.config.orchestrator.defaultLimits;
    const limits = {
      maxSteps: request.limits?.maxSteps ?? defaults.maxSteps,
      maxToolCalls: request.limits?.maxToolCalls ?? defaults.maxToolCalls,
    };
    const graph = buildAgentGraph({
      limits,
      checkpointer: new FencedCheckpointer(this.checkpointer, context.lease),
      callModel: async (messages, signal) => {
        // A replica that lost the run takes no further model step.
        await context.lease.confirm();
        const view = await this.catalog.view(...context.filters);
        const step = messages.filter(isAiMessage).length + 1;
        context.log.debug({ step }, 'model step');
        await this.events.publish(context.job.id, 'step', { step });
        return inModelSpan(spec, step, async () => {
          try {
            return (await model
              .bindTools(toFunctionTools(view.tools))
              .invoke(messages, signal ? { signal } : {})) as AIMessage;
          } catch (error) {
            if (signal?.aborted) throw error;
            // Providers quote the key they were sent in some refusals; the reason must not carry it.
            throw new ModelCallError(
              scrubSecret(`the model (${spec.provider}) failed: ${(error as Error).message}`, secret),
            );
          }
        });
      },
      runTools: async (calls) =>
        inSpan(
          'tools',
          { attributes: { [ATTR.GRAPH_NODE]: 'tools', [ATTR.TOOL_CALLS]: calls.length } },
          async () => {
            const settled = await Promise.all(calls.map((call) => this.calls.execute(context, call)));
            const waits = settled.filter((entry): entry is CallWait => !('status' in entry));
            if (waits.length > 0) return { waits };
            return {
              // The model matches results by its own id, even when it used one id twice.
              messages: settled.map((outcome, index) => {
                const call = calls[index] as (typeof calls)[number];
                return toToolMessage(outcome as ToolCallOutcome, call.modelId, call.name);
              }),
            };
          },
        ),
    });
    const config = {
      configurable: { thread_id: context.job.id },
      signal: context.stop,
      recursionLimit: limits.maxSteps * 2 + 10,
    };
    // A checkpoint means an earlier attempt got this far: continue from it instead of starting over.
    const snapshot = await graph.getState(config);
    const resumed = (snapshot.values.messages?.length ?? 0) > 0;
    if (resumed) context.log.info({ next: snapshot.next }, 'resuming run from its checkpoint');
    // Always invoke, also when getState shows nothing next: a node whose writes were saved before the
    // crash but whose step never completed leaves `next` empty although the graph has more to do.
    // Invoking with null input applies those writes and carries on; on a finished graph it is a no-op.
    // A run parked on a person resumes with LangGraph's Command: the `wait` node returns and the tools
    // node settles the answered calls (or finds them still open and waits again).
    let input: unknown = resumed ? null : { messages: initialMessages(request) };
    if (snapshot.next.includes('wait')) input = new Command({ resume: { at: Date.now() } });
    const final = await graph.invoke(input as null, config);
    const after = await graph.getState(config);
    if (after.next.includes('wait')) throw new RunParked((after.values.waits ?? []) as CallWait[]);
    const last = final.messages.at(-1);
    if (!last || !isAiMessage(last) || ((last as AIMessage).tool_calls?.length ?? 0) > 0) {
      throw new Error(
        `the graph stopped without a final answer (last message: ${last?.getType() ?? 'none'})`,
      );
    }
    const answer = messageText(last);
    await this.events.publish(context.job.id, 'message', { role: 'assistant', content: answer });
    return answer;
  }
}

function isAiMessage(message: { getType(): string }): boolean {
  return message.getType() === 'ai';
}

function allOk(counts: Record<string, number>): boolean {
  return Object.keys(counts).every((status) => status === 'ok');
}

function countStatuses(outcomes: ToolCallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
  return counts;
}
