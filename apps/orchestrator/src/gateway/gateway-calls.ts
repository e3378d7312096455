import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  contextFrom,
  RELAY_PROGRESS_LABEL,
  type ToolCallOutcome,
  toolCallJobId,
  toolQueueName,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import type { Team } from '../auth/teams.service.ts';
import { type ModelTool, ModelToolCatalog } from '../catalog/model-tool-catalog.ts';
import { localOutcome } from '../dispatch/local-outcome.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { JobEvents, toolCallFinishedEvent } from '../jobs/job-events.ts';
import { FINAL_STATUSES, type McpJobRequest } from '../jobs/job-request.ts';
import { ConcurrencyLimitError, type JobRecord, JobStore } from '../jobs/job-store.ts';
import { JobsService } from '../jobs/jobs.service.ts';
import { requestDigest } from '../jobs/request-digest.ts';
import { jobTraceContext } from '../jobs/trace-context.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { inSpan, SpanKind } from '../telemetry/spans.ts';
import { toCallToolResult } from './outcome-result.ts';
import { ProgressListener } from './progress-listener.ts';
import { RequestRegistry } from './request-registry.ts';

/**
 * `_meta` key a client sets on tools/call to make a retry safe: the same key (per team) attaches the retry
 * to the first call's job and returns its outcome instead of running the tool again.
 */
export const IDEMPOTENCY_META_KEY = 'io.switchyard/idempotency-key';
/** A gateway job holds exactly one call, under this id (so its BullMQ id follows from the job id alone). */
export const GATEWAY_CALL_ID = 'call-1';

export interface GatewayCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/**
 * One `tools/call` on /mcp as a recorded job of kind `mcp` with one tool call on its server's queue
 * (docs/architecture.md, gateway): the same dispatcher, outcomes and trace as a batch job's call, while
 * the client's request waits for it.
 */
@Injectable()
export class GatewayCalls implements OnModuleInit {
  /** Jobs whose call this replica waits for, so a cancel announced by any replica reaches the call. */
  private readonly local = new Set<string>();

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(ProgressListener) private readonly progress: ProgressListener,
    @Inject(RequestRegistry) private readonly requests: RequestRegistry,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onModuleInit(): void {
    this.events.onCancel((jobId) => {
      if (!this.local.has(jobId)) return;
      // Queued: removed, ends `cancelled` (did not run). Running: cancelled on its worker, which reports
      // what really happened. The outcome is recorded by call() as it arrives.
      this.dispatcher
        .cancel(jobId, 'the MCP client cancelled the call')
        .catch((error: unknown) =>
          this.log.error({ job_id: jobId, err: error }, 'cancelling a gateway call failed'),
        );
    });
  }

  /** The tools a team may call, as its MCP clients see them. */
  async tools(team: Team): Promise<ModelTool[]> {
    return (await this.catalog.view(team.config.tools)).tools;
  }

  /** A client's `notifications/cancelled` (2025-11-25): cancels the team's call with that request id. */
  async cancelByRequest(team: Team, requestId: string | number, reason?: string): Promise<void> {
    const jobId = await this.requests.jobOf(team.name, requestId);
    if (!jobId) return;
    this.log.info({ job_id: jobId, team: team.name, reason }, 'MCP client cancelled a call');
    await this.jobs.cancel(team, jobId).catch(() => undefined); // already ended: nothing to cancel
  }

  async call(
    team: Team,
    params: GatewayCallParams,
    ctx: ServerContext,
    protocolVersion?: string,
  ): Promise<CallToolResult> {
    const meta = params._meta ?? ctx.mcpReq._meta ?? {};
    const traceparent = typeof meta.traceparent === 'string' ? meta.traceparent : undefined;
    const tracestate = typeof meta.tracestate === 'string' ? meta.tracestate : undefined;
    // The client's trace context (if any) parents the whole call; else the HTTP request's span does.
    return inSpan(
      `mcp tools/call ${params.name}`,
      {
        kind: SpanKind.SERVER,
        ...(traceparent
          ? { parent: contextFrom({ traceparent, ...(tracestate ? { tracestate } : {}) }) }
          : {}),
        attributes: {
          [ATTR.GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR.GEN_AI_TOOL_NAME]: params.name,
          [ATTR.TEAM]: team.name,
        },
      },
      () => this.run(team, params, meta, ctx, protocolVersion),
    );
  }

  private async run(
    team: Team,
    params: GatewayCallParams,
    meta: Record<string, unknown>,
    ctx: ServerContext,
    protocolVersion?: string,
  ): Promise<CallToolResult> {
    const key = idempotencyKey(meta[IDEMPOTENCY_META_KEY]);
    const args = params.arguments ?? {};
    const { tool, refused } = await this.catalog.resolve(params.name, [team.config.tools], ctx.mcpReq.signal);
    if (refused && refused.code !== 'no_worker' && refused.code !== 'catalog_unpublished') {
      // Unknown, not allowed or ambiguous: a protocol error (as for any MCP server), and no job.
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${refused.text} (tool "${params.name}")`);
    }
    const request: McpJobRequest = {
      kind: 'mcp',
      tool: params.name,
      arguments: args,
      ...(protocolVersion ? { protocolVersion } : {}),
    };
    const trace = jobTraceContext();
    let job: JobRecord;
    let created: boolean;
    try {
      ({ job, created } = await this.store.create(
        {
          id: `job_${randomUUID()}`,
          team: team.name,
          kind: 'mcp',
          request,
          traceId: trace.traceId,
          traceparent: trace.traceparent,
          idempotencyKey: key ? `mcp:${key}` : null,
          requestDigest: requestDigest(request),
        },
        team.config.maxConcurrentJobs,
      ));
    } catch (error) {
      if (!(error instanceof ConcurrencyLimitError)) throw error;
      return {
        content: [{ type: 'text', text: `[rate_limited] ${error.message}. The tool did not run.` }],
        isError: true,
      };
    }
    if (!created && (job.request.kind !== 'mcp' || job.request.tool !== params.name)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `${IDEMPOTENCY_META_KEY} "${key}" was already used by this team for another request (job ${job.id})`,
      );
    }
    const log = this.log.child({ job_id: job.id, team: team.name, trace_id: job.traceId, tool: params.name });
    if (created) {
      this.metrics.jobSubmitted('mcp', team.name);
      log.info({ request_id: ctx.mcpReq.id }, 'MCP tool call received');
    } else {
      const recorded = await this.store.toolCall(job.id, GATEWAY_CALL_ID);
      if (recorded?.outcome) {
        log.info('MCP retry answered from the recorded outcome');
        return toCallToolResult(recorded.outcome, job.id);
      }
      if (FINAL_STATUSES.has(job.status)) {
        // Ended (a cancel) before its outcome was written: dispatching again could run it a second time.
        return {
          content: [
            {
              type: 'text',
              text: `[${job.status}] job ${job.id} ended before its call's outcome was recorded. The tool may or may not have run: check before retrying a write.`,
            },
          ],
          isError: true,
        };
      }
      if (!tool || tool.availability === 'none' || tool.availability === 'down') {
        // The dispatcher would answer "unavailable, not sent" while the first attempt's call may sit in
        // its queue or have run: say that the outcome is not known yet, and record nothing.
        return {
          content: [
            {
              type: 'text',
              text: `[unavailable] No worker serves the server of ${params.name} right now, so the outcome of job ${job.id} is not known yet. The tool may or may not have run: retry with the same key later.`,
            },
          ],
          isError: true,
        };
      }
      log.info('MCP retry attached to the call in flight');
    }

    const target = {
      jobId: job.id,
      toolCallId: GATEWAY_CALL_ID,
      server: tool?.server ?? refused?.server ?? '',
      tool: tool?.tool ?? params.name,
      enqueuedAt: Date.now(),
      trace: { traceparent: job.traceparent },
    };
    await this.store.markRunning(job.id);
    await this.store.recordDispatch({
      jobId: job.id,
      toolCallId: GATEWAY_CALL_ID,
      position: 0,
      modelTool: params.name,
      server: target.server || null,
      tool: tool?.tool ?? null,
      arguments: args,
    });
    if (created) {
      await this.events.publish(job.id, 'status', { status: 'running' });
      await this.events.publish(job.id, 'tool_call.dispatched', {
        id: GATEWAY_CALL_ID,
        tool: params.name,
        server: tool?.server,
      });
    }

    const outcome = tool
      ? await this.dispatchWatched(team, job, tool, args, key, ctx)
      : localOutcome(
          target,
          refused?.status ?? 'unavailable',
          refused?.text ?? 'not sent',
          refused?.code,
          'no',
        );
    await this.record(job, outcome, log);
    return toCallToolResult(outcome, job.id);
  }

  /**
   * Dispatches the call, forwarding its progress and cancelling it when the client goes away: an explicit
   * cancel always; a closed stream only when the call has no idempotency key, since a client that sent one
   * says it will come back for the outcome (a lost stream is then not a cancel).
   */
  private async dispatchWatched(
    team: Team,
    job: JobRecord,
    tool: ModelTool,
    args: Record<string, unknown>,
    key: string | undefined,
    ctx: ServerContext,
  ): Promise<ToolCallOutcome> {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const cleanup: Array<() => void> = [];
    this.local.add(job.id);
    await this.requests.register(team.name, ctx.mcpReq.id, job.id);
    if (progressToken !== undefined) {
      const bullId = toolCallJobId(job.id, GATEWAY_CALL_ID);
      cleanup.push(
        this.progress.on(toolQueueName(tool.server), bullId, (progress) => {
          ctx.mcpReq
            .notify({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: progress.progress,
                ...(progress.total !== undefined ? { total: progress.total } : {}),
                ...(progress.message !== undefined ? { message: progress.message } : {}),
              },
            })
            .catch(() => undefined); // the client went away; its cancel is handled below
        }),
      );
    }
    if (!key) {
      const onAbort = () => void this.jobs.cancel(team, job.id).catch(() => undefined /* already ended */);
      ctx.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
      cleanup.push(() => ctx.mcpReq.signal.removeEventListener('abort', onAbort));
    }
    try {
      return await this.dispatcher.dispatch({
        jobId: job.id,
        toolCallId: GATEWAY_CALL_ID,
        server: tool.server,
        tool: tool.tool,
        arguments: args,
        // The team reaches the worker: its credential for the server (semantics §13), its fair share.
        team: team.name,
        labels: {
          team: team.name,
          ...(progressToken !== undefined ? { [RELAY_PROGRESS_LABEL]: 'true' } : {}),
        },
      });
    } finally {
      for (const undo of cleanup) undo();
      this.local.delete(job.id);
      await this.requests.release(team.name, ctx.mcpReq.id, job.id).catch(() => undefined);
    }
  }

  /** Whether this replica is waiting for the call of `jobId` (its own request holds it). */
  isLocal(jobId: string): boolean {
    return this.local.has(jobId);
  }

  /** The call's one outcome and the job's end, as for a batch job's call (first writer wins). */
  async record(job: JobRecord, outcome: ToolCallOutcome, log: Logger): Promise<void> {
    const tool = job.request.kind === 'mcp' ? job.request.tool : outcome.tool;
    await this.events.publishWith(
      job.id,
      'tool_call.finished',
      toolCallFinishedEvent(GATEWAY_CALL_ID, tool, outcome),
      (event) => this.store.recordOutcome(job.id, GATEWAY_CALL_ID, outcome, event),
    );
    this.metrics.toolCall(outcome, job.team);
    const answered = outcome.status === 'ok' || outcome.status === 'tool_error';
    const result = { status: outcome.status, executed: outcome.executed };
    const status = answered ? 'succeeded' : 'failed';
    const error = answered ? undefined : `${outcome.status}: ${outcome.text}`;
    const ended = await this.events.publishWith(job.id, 'status', { status }, (event) =>
      this.store.finish(job.id, status, result, error, event),
    );
    if (ended) this.metrics.runEnded('mcp', status, job.team);
    log.info({ status: outcome.status, executed: outcome.executed }, 'MCP tool call settled');
  }
}

/** A usable idempotency key, or a clear error for one that is not. */
function idempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 1 || value.length > 200) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `_meta["${IDEMPOTENCY_META_KEY}"] must be a string of 1 to 200 characters`,
    );
  }
  return value;
}
