import type { AIMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { contextFrom, type SwitchyardConfig, type ToolCallOutcome } from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import pLimit from 'p-limit';
import { TeamsService } from '../../auth/teams.service.ts';
import { ModelToolCatalog, type ToolFilter } from '../../catalog/model-tool-catalog.ts';
import { CHECKPOINTER } from '../../checkpoints/checkpointer.ts';
import { ToolCallDispatcher } from '../../dispatch/tool-call-dispatcher.ts';
import { JobEvents } from '../../jobs/job-events.ts';
import type { AgentJobRequest, BatchJobRequest } from '../../jobs/job-request.ts';
import { type JobRecord, JobStore } from '../../jobs/job-store.ts';
import { OrchestratorMetrics } from '../../metrics/orchestrator-metrics.ts';
import { createChatModel } from '../../models/index.ts';
import { messageText } from '../../models/message-text.ts';
import type { Logger } from '../../runtime/logger.ts';
import { CONFIG, LOGGER } from '../../runtime/tokens.ts';
import { inSpan } from '../../telemetry/spans.ts';
import { buildAgentGraph } from '../graph/agent-graph.ts';
import { initialMessages } from '../graph/initial-messages.ts';
import { RunLimitError } from '../graph/run-limit-error.ts';
import { toFunctionTools } from '../graph/tool-definitions.ts';
import { toToolMessage } from '../graph/tool-message.ts';
import type { RunContext } from '../tool-calls/run-context.ts';
import { ToolCallExecutor } from '../tool-calls/tool-call-executor.ts';
import { FencedCheckpointer } from './fenced-checkpointer.ts';
import { ModelCallError } from './model-call-error.ts';
import { inModelSpan } from './model-span.ts';
import { LeaseLostError, type RunLease, raceSignal, UNCONTESTED_LEASE } from './run-lease.ts';

/** Tool calls of one batch in flight at once: enough to keep every server's queue busy. */
const BATCH_IN_FLIGHT = 200;

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
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(ToolCallExecutor) private readonly executor: ToolCallExecutor,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(CHECKPOINTER) private readonly checkpointer: BaseCheckpointSaver,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(LOGGER) private readonly log: Logger,
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

  /** `lease` is this replica's hold on the run; a run lost to another replica stops without a trace. */
  async run(jobId: string, replicaId: string, lease: RunLease = UNCONTESTED_LEASE): Promise<void> {
    const job = await this.store.markRunning(jobId);
    if (!job) return; // cancelled before it started, or already finished by an earlier attempt
    // The run joins the trace of the request that submitted the job, whichever replica runs it.
    const agent = job.kind === 'agent';
    await inSpan(
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
      () => this.runJob(job, replicaId, lease),
    );
  }

  private async runJob(job: JobRecord, replicaId: string, lease: RunLease): Promise<void> {
    // trace_id and span_id come from the active span (see runtime/logger.ts).
    const log = this.log.child({ job_id: job.id, team: job.team });
    await this.events.publish(job.id, 'status', { status: 'running', replica: replicaId });
    log.info({ kind: job.kind }, 'run started');

    const controller = new AbortController();
    const controllers = this.running.get(job.id) ?? new Set();
    this.running.set(job.id, controllers.add(controller));
    const deadlineMs = job.request.limits?.deadlineMs ?? this.config.orchestrator.defaultLimits.deadlineMs;
    const startedAt = (job.startedAt ?? new Date()).getTime();
    const deadline = AbortSignal.timeout(Math.max(1, startedAt + deadlineMs - Date.now()));
    const cancel = AbortSignal.any([controller.signal, deadline]);
    const context: RunContext = {
      job,
      filters: this.filtersFor(job),
      cancel,
      lease,
      stop: AbortSignal.any([cancel, lease.signal]),
      log,
    };
    try {
      const result =
        job.request.kind === 'agent'
          ? await this.runAgent(context, job.request)
          : await this.runBatch(context, job.request);
      // Only the replica holding the run ends it.
      await lease.confirm();
      await this.end(job, 'succeeded', result);
      log.info('run succeeded');
    } catch (error) {
      if (lease.signal.aborted || error instanceof LeaseLostError) {
        // Not ours to finish, fail or cancel any more: the replica holding the lock resumes the run
        // and settles every call this one left open. Nothing was recorded for those here.
        log.warn({ err: error }, 'run handed over after a lost lock; stopped here');
        throw error;
      }
      if (controller.signal.aborted) {
        await this.dispatcher.cancel(job.id);
        this.metrics.runEnded(job.kind, 'cancelled');
        log.info('run stopped: job cancelled');
      } else if (deadline.aborted) {
        await this.dispatcher.cancel(job.id);
        await this.end(job, 'failed', undefined, `the job ran past its deadline (${deadlineMs} ms)`);
      } else if (error instanceof RunLimitError || error instanceof ModelCallError) {
        await this.end(job, 'failed', undefined, error.message);
        log.warn({ err: error }, 'run failed');
      } else {
        log.error({ err: error }, 'run interrupted; BullMQ will retry it');
        throw error;
      }
    } finally {
      controllers.delete(controller);
      if (controllers.size === 0 && this.running.get(job.id) === controllers) this.running.delete(job.id);
    }
  }

  /** Called by the consumer when BullMQ gives up on a run: the job must not stay `running` forever. */
  async giveUp(jobId: string, reason: string): Promise<void> {
    const job = await this.store.get(jobId);
    if (job) await this.end(job, 'failed', undefined, `the run failed repeatedly: ${reason}`);
  }

  private async end(
    job: JobRecord,
    status: 'succeeded' | 'failed',
    result: unknown,
    error?: string,
  ): Promise<void> {
    if (await this.store.finish(job.id, status, result, error)) {
      this.metrics.runEnded(job.kind, status);
      await this.events.publish(job.id, 'status', { status, ...(error ? { error } : {}) });
    }
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

  private async runBatch(context: RunContext, request: BatchJobRequest) {
    const limit = pLimit(BATCH_IN_FLIGHT);
    const all = Promise.all(
      request.calls.map((call, position) =>
        limit(() =>
          this.executor.execute(context, {
            id: `call-${position + 1}`,
            name: call.tool,
            args: call.arguments,
            position,
          }),
        ),
      ),
    );
    // A cancel or the deadline ends the run now, even if a call never answers; the calls already
    // started still record their own outcomes (queued ones end `cancelled`).
    const outcomes = await raceSignal(all, context.stop, () => new Error('the run was stopped'));
    return { calls: outcomes.length, outcomes: countStatuses(outcomes) };
  }

  private async runAgent(context: RunContext, request: AgentJobRequest): Promise<string> {
    const spec = request.model;
    if (!spec) throw new ModelCallError('the job has no model');
    const model = createChatModel(spec);
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
            throw new ModelCallError(`the model (${spec.provider}) failed: ${(error as Error).message}`);
          }
        });
      },
      runTools: async (calls) =>
        inSpan('tools', { attributes: { [ATTR.GRAPH_NODE]: 'tools', [ATTR.TOOL_CALLS]: calls.length } }, () =>
          Promise.all(
            calls.map(async (call) => {
              const outcome = await this.executor.execute(context, call);
              // The model matches results by its own id, even when it used one id twice.
              return toToolMessage(outcome, call.modelId, call.name);
            }),
          ),
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
    const final = await graph.invoke(resumed ? null : { messages: initialMessages(request) }, config);
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

function countStatuses(outcomes: ToolCallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
  return counts;
}
