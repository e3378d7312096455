import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  type OnModuleInit,
} from '@nestjs/common';
import {
  contextFrom,
  type LogLevel,
  logLevelPasses,
  type Question,
  toolCallJobId,
  toolQueueName,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import { type Team, TeamsService } from '../auth/teams.service.ts';
import { type ModelTool, ModelToolCatalog } from '../catalog/model-tool-catalog.ts';
import { ProgressListener } from '../dispatch/progress-listener.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { InputsService } from '../inputs/inputs.service.ts';
import { InputStore } from '../jobs/input-store.ts';
import { JobEvents } from '../jobs/job-events.ts';
import { FINAL_STATUSES, JobIdSchema, type McpJobRequest } from '../jobs/job-request.ts';
import { ConcurrencyLimitError, type JobRecord, JobStore } from '../jobs/job-store.ts';
import { JobsService } from '../jobs/jobs.service.ts';
import { requestDigest } from '../jobs/request-digest.ts';
import { jobTraceContext } from '../jobs/trace-context.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { inSpan, SpanKind } from '../telemetry/spans.ts';
import { callLogLevel } from './call-log-level.ts';
import { GATEWAY_CALL_ID, GatewayJobs, type GatewayRun, type RelayedQuestion } from './gateway-jobs.ts';
import { LogLevels, logLevelClient } from './log-levels.ts';
import { endedWithoutOutcome, notice, toCallToolResult } from './outcome-result.ts';
import { RequestRegistry } from './request-registry.ts';

/**
 * `_meta` key a client sets on tools/call to make a retry safe: the same key (per team) with the same
 * tool and arguments attaches the retry to the first call's job and returns its outcome instead of
 * running the tool again; the same key with another tool or other arguments is refused.
 */
export const IDEMPOTENCY_META_KEY = 'io.switchyard/idempotency-key';

/** The key of the one input request a relayed question is (its answer comes back under it). */
export const QUESTION_INPUT_KEY = 'question';

export interface GatewayCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** A tools/call that has its job (new, or the first call's for a retry with its key) and goes on. */
export interface AdmittedCall {
  team: Team;
  job: JobRecord;
  name: string;
  args: Record<string, unknown>;
  key: string | undefined;
  server: string | undefined;
  log: Logger;
}

/**
 * What becomes of an admitted call instead of holding the request until its outcome (a task on
 * 2026-07-28, gateway-tasks.ts): the client's answer, given at once.
 */
export type FollowAdmitted = (call: AdmittedCall) => Promise<CallToolResult>;

/**
 * `tools/call` on /mcp as a door of the one tool-call life cycle (docs/architecture.md, gateway): the
 * request becomes a recorded job of kind `mcp` with one call, which GatewayJobs runs through the same
 * life cycle as an agent's or a batch's call — filters, approvals, quotas, fair share, outcome — while
 * the client's request waits, with its progress relayed and its cancel honoured.
 */
@Injectable()
export class GatewayCalls implements OnModuleInit {
  /** Jobs whose call this replica waits for, with the switch that cancels it. */
  private readonly local = new Map<string, AbortController>();

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(GatewayJobs) private readonly gatewayJobs: GatewayJobs,
    @Inject(ProgressListener) private readonly progress: ProgressListener,
    @Inject(RequestRegistry) private readonly requests: RequestRegistry,
    @Inject(LogLevels) private readonly levels: LogLevels,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(InputsService) private readonly answers: InputsService,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onModuleInit(): void {
    // A cancel announced by any replica (`POST /v1/jobs/:id/cancel`, the client's
    // notifications/cancelled) reaches the call: queued, it is removed and ends `cancelled`; running, it
    // is cancelled on its worker, which reports what really happened; awaiting approval, it is not sent.
    this.events.onCancel((jobId) => {
      const cancel = this.local.get(jobId);
      if (!cancel) return;
      cancel.abort();
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

  /** A 2025-11-25 client's `logging/setLevel`: its API key's later calls are relayed at that level. */
  async setLogLevel(team: Team, token: string, level: LogLevel): Promise<void> {
    await this.levels.set(team.name, logLevelClient(token), level);
    this.log.info({ team: team.name, level }, 'MCP client set its log level');
  }

  /** A client's `notifications/cancelled` (2025-11-25): cancels the team's call with that request id. */
  async cancelByRequest(team: Team, requestId: string | number, reason?: string): Promise<void> {
    const jobId = await this.requests.jobOf(team.name, requestId);
    if (!jobId) return;
    this.log.info({ job_id: jobId, team: team.name, reason }, 'MCP client cancelled a call');
    await this.jobs.cancel(team, jobId).catch(() => undefined); // already ended: nothing to cancel
  }

  /** Whether this replica is waiting for the call of `jobId` (its own request holds it). */
  isLocal(jobId: string): boolean {
    return this.local.has(jobId);
  }

  /**
   * One tools/call: admitted (a job, or a refusal), then followed while the client waits — or, with
   * `follow`, handed to it and answered at once (a task).
   */
  async call(
    team: Team,
    params: GatewayCallParams,
    ctx: ServerContext,
    protocolVersion?: string,
    follow?: FollowAdmitted,
  ): Promise<CallToolResult | InputRequiredResult> {
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
      async () => {
        // A 2025-11-25 client's logging/setLevel, read while the call is admitted (no wait of its own).
        const token = ctx.http?.authInfo?.token;
        const stored =
          protocolVersion !== '2026-07-28' && token && !follow
            ? this.levels.get(team.name, logLevelClient(token)).catch((error: unknown) => {
                this.log.warn({ err: error, team: team.name }, 'could not read the MCP client log level');
                return undefined;
              })
            : undefined;
        const modern = protocolVersion === '2026-07-28';
        // A retry that carries the answer to a question this gateway relayed names its job (2026-07-28).
        const state = modern && !follow ? ctx.mcpReq.requestState<unknown>() : undefined;
        const { admitted, answer } =
          state === undefined
            ? await this.admit(team, params, meta, ctx, protocolVersion)
            : { admitted: await this.answered(team, params, meta, ctx, state) };
        if (!admitted) return answer;
        if (follow) return follow(admitted);
        const { job, name, args, key, server, log } = admitted;
        const logLevel = callLogLevel(ctx, modern, await stored);
        // A tool's question goes to a 2026-07-28 client that can answer it, else to the team's people.
        const relayModes = modern ? elicitationModes(ctx) : [];
        const outcome = await this.waitFor(
          team,
          job,
          name,
          args,
          key,
          ctx,
          log,
          server,
          logLevel,
          relayModes,
        );
        if (outcome && 'relay' in outcome) return questionResult(outcome, job.id);
        return outcome
          ? toCallToolResult(outcome, job.id)
          : notice(
              'input_required',
              `job ${job.id} still waits for a person's approval or answer; retry with the same key to follow it.`,
            );
      },
    );
  }

  /**
   * Runs an admitted call with no request waiting for it (its client follows the job as a task):
   * the same life cycle as a waiting request, with no client stream whose end could cancel it; a
   * cancel of the job (tasks/cancel, /v1) still reaches it through `local`. A replica that dies
   * meanwhile leaves the job to every replica's orphan sweep, as for a client that left with a key.
   */
  detach(call: AdmittedCall): void {
    const { job, name, args, log } = call;
    if (this.local.has(job.id)) return; // this replica carries it already (a retry with the key)
    const cancel = new AbortController();
    this.local.set(job.id, cancel);
    this.gatewayJobs
      .run(job, { name, args, cancel: cancel.signal, log })
      .catch((error: unknown) => log.error({ err: error }, 'running a detached MCP call failed'))
      .finally(() => {
        if (this.local.get(job.id) === cancel) this.local.delete(job.id);
      });
  }

  /**
   * A 2026-07-28 retry answering a question this gateway relayed (`requestState` = the job's id): the
   * job must be this team's gateway call of the same tool and arguments — the state comes back through
   * the client, so it grants nothing the team's key does not — and the answer in `inputResponses` is
   * recorded as a person's answer on /v1 is (validated against the question's schema, with who and
   * when). The call then goes on as a keyed retry does. A retry without the answer is asked again.
   */
  private async answered(
    team: Team,
    params: GatewayCallParams,
    meta: Record<string, unknown>,
    ctx: ServerContext,
    state: unknown,
  ): Promise<AdmittedCall> {
    const jobId = JobIdSchema.safeParse(state).data;
    const job = jobId ? await this.store.get(jobId) : undefined;
    if (!job || job.team !== team.name || job.request.kind !== 'mcp') {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'requestState does not name a call of this team that waits for an answer',
      );
    }
    const args = params.arguments ?? {};
    if (job.requestDigest !== requestDigest({ tool: params.name, arguments: args })) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `the retry that answers the question of job ${job.id} must repeat its tool and arguments (${describeCall(job)} was asked)`,
      );
    }
    const key = idempotencyKey(meta[IDEMPOTENCY_META_KEY]);
    const log = this.log.child({ job_id: job.id, team: team.name, trace_id: job.traceId, tool: params.name });
    const question = await this.inputs.lastQuestion(job.id, GATEWAY_CALL_ID);
    const response = inputResponse(ctx.mcpReq.inputResponses, QUESTION_INPUT_KEY);
    if (question?.state === 'pending' && response.kind === 'elicit') {
      const token = ctx.http?.authInfo?.token;
      const decidedBy = (token && this.teams.identify(token)?.label) || `${team.name} (MCP client)`;
      const body = {
        toolCallId: GATEWAY_CALL_ID,
        action: response.action,
        ...(response.content ? { content: response.content } : {}),
      };
      try {
        await this.answers.answer(team, job.id, body, decidedBy);
        log.info({ action: response.action }, "MCP client answered the tool's question");
      } catch (error) {
        if (error instanceof BadRequestException) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `inputResponses.${QUESTION_INPUT_KEY}: ${error.message}`,
          );
        }
        // Expired or answered meanwhile: the call goes on and says which.
        if (!(error instanceof ConflictException)) throw error;
      }
    }
    const { tool } = await this.catalog.resolve(params.name, [team.config.tools], ctx.mcpReq.signal);
    return { team, job, name: params.name, args, key, server: tool?.server, log };
  }

  /** The call's job (created, or the retry's first one), or the answer that ends it here. */
  private async admit(
    team: Team,
    params: GatewayCallParams,
    meta: Record<string, unknown>,
    ctx: ServerContext,
    protocolVersion?: string,
  ): Promise<{ admitted: AdmittedCall; answer?: never } | { admitted?: never; answer: CallToolResult }> {
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
    // The digest of what identifies the call: a retry with the same key must be the same call (the
    // revision the client speaks may differ between a request and its retry).
    const digest = requestDigest({ tool: params.name, arguments: args });
    const created = await this.create(team, request, key, digest);
    if ('content' in created) return { answer: created };
    const { job } = created;
    if (!created.created && job.requestDigest !== digest) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `${IDEMPOTENCY_META_KEY} "${key}" was already used by this team for ${describeCall(job)} (job ${job.id}); a retry must repeat the same tool and arguments, a new call needs a new key`,
      );
    }
    const log = this.log.child({ job_id: job.id, team: team.name, trace_id: job.traceId, tool: params.name });
    if (created.created) {
      this.metrics.jobSubmitted('mcp', team.name);
      log.info({ request_id: ctx.mcpReq.id }, 'MCP tool call received');
    } else {
      const replay = await this.replay(job, tool, params.name, log);
      if (replay) return { answer: replay };
    }
    return { admitted: { team, job, name: params.name, args, key, server: tool?.server, log } };
  }

  private async create(
    team: Team,
    request: McpJobRequest,
    key: string | undefined,
    digest: string,
  ): Promise<{ job: JobRecord; created: boolean } | CallToolResult> {
    const trace = jobTraceContext();
    try {
      return await this.store.create(
        {
          id: `job_${randomUUID()}`,
          team: team.name,
          kind: 'mcp',
          request,
          traceId: trace.traceId,
          traceparent: trace.traceparent,
          idempotencyKey: key ? `mcp:${key}` : null,
          requestDigest: digest,
        },
        team.config.maxConcurrentJobs,
      );
    } catch (error) {
      if (!(error instanceof ConcurrencyLimitError)) throw error;
      this.metrics.quotaRejected(team.name, 'maxConcurrentJobs');
      return notice('rate_limited', `${error.message}. The tool did not run.`);
    }
  }

  /** A retry with the key of an earlier call: its outcome when it has one, else undefined (follow it). */
  private async replay(
    job: JobRecord,
    tool: ModelTool | undefined,
    name: string,
    log: Logger,
  ): Promise<CallToolResult | undefined> {
    const recorded = await this.gatewayJobs.recordedOutcome(job);
    if (recorded) {
      log.info('MCP retry answered from the recorded outcome');
      return toCallToolResult(recorded, job.id);
    }
    if (FINAL_STATUSES.has(job.status)) {
      // Ended (a cancel) before its outcome was written: dispatching again could run it a second time.
      return endedWithoutOutcome(job.id, job.status);
    }
    if (!tool || tool.availability === 'none' || tool.availability === 'down') {
      // The life cycle would answer "unavailable, not sent" while the first attempt's call may sit in
      // its queue or have run: say that the outcome is not known yet, and record nothing.
      return notice(
        'unavailable',
        `No worker serves the server of ${name} right now, so the outcome of job ${job.id} is not known yet. The tool may or may not have run: retry with the same key later.`,
      );
    }
    log.info('MCP retry attached to the call in flight');
    return undefined;
  }

  /**
   * Runs the job's call through the life cycle while the client waits, forwarding progress (and, while
   * the call waits for an approval, a progress notification that says so) and cancelling it when the
   * client goes away: an explicit cancel always; a closed stream only when the call has no idempotency
   * key, since a client that sent one says it will come back for the outcome. Undefined when the client
   * left with a key while the call waited for a person.
   */
  private async waitFor(
    team: Team,
    job: JobRecord,
    name: string,
    args: Record<string, unknown>,
    key: string | undefined,
    ctx: ServerContext,
    log: Logger,
    server: string | undefined,
    logLevel: LogLevel | undefined,
    relayModes: Question['mode'][],
  ): Promise<Awaited<ReturnType<GatewayJobs['run']>>> {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const notify = (progress: { progress: number; total?: number; message?: string }) => {
      if (progressToken === undefined) return;
      ctx.mcpReq
        .notify({ method: 'notifications/progress', params: { progressToken, ...progress } })
        .catch(() => undefined); // the client went away; its cancel is handled below
    };
    const cancel = new AbortController();
    const cleanup: Array<() => void> = [];
    this.local.set(job.id, cancel);
    await this.requests.register(team.name, ctx.mcpReq.id, job.id);
    if (progressToken !== undefined && server) {
      const bullId = toolCallJobId(job.id, GATEWAY_CALL_ID);
      cleanup.push(this.progress.on(toolQueueName(server), bullId, (progress) => notify(progress)));
    }
    if (logLevel && server) {
      // The call's own queue job: only this team's call publishes under it (the worker relays a log
      // message only to the one call in flight on its session, session-logs.ts).
      const bullId = toolCallJobId(job.id, GATEWAY_CALL_ID);
      cleanup.push(
        this.progress.onLog(toolQueueName(server), bullId, ({ log: message }) => {
          if (!logLevelPasses(message.level, logLevel)) return;
          ctx.mcpReq.notify({ method: 'notifications/message', params: message }).catch(() => undefined); // the client went away; its cancel is handled below
        }),
      );
    }
    if (!key) {
      const onAbort = () => void this.jobs.cancel(team, job.id).catch(() => undefined /* already ended */);
      ctx.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
      cleanup.push(() => ctx.mcpReq.signal.removeEventListener('abort', onAbort));
    }
    const run: GatewayRun = {
      name,
      args,
      cancel: cancel.signal,
      client: ctx.mcpReq.signal,
      log,
      ...(logLevel ? { logLevel } : {}),
      questions: relayModes.length > 0 ? 'relay' : 'park',
      relayModes,
      onWait: (wait) =>
        notify({
          progress: 0,
          message: `waiting for a person to ${wait.kind === 'approval' ? 'approve' : 'answer the question of'} ${name} (job ${job.id}, expires ${new Date(wait.expiresAt).toISOString()})`,
        }),
    };
    try {
      return await this.gatewayJobs.run(job, run);
    } finally {
      for (const undo of cleanup) undo();
      this.local.delete(job.id);
      await this.requests.release(team.name, ctx.mcpReq.id, job.id).catch(() => undefined);
    }
  }
}

/**
 * The elicitation modes a 2026-07-28 request's client declares it can answer (its per-request
 * `clientCapabilities`): an empty `elicitation` object means form (the 2025-06-18 shape).
 */
function elicitationModes(ctx: ServerContext): Question['mode'][] {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined;
  const elicitation = capabilities?.elicitation;
  if (!elicitation || typeof elicitation !== 'object') return [];
  const modes = Object.keys(elicitation).filter(
    (mode): mode is Question['mode'] => mode === 'form' || mode === 'url',
  );
  return modes.length > 0 ? modes : ['form'];
}

/** The question as a 2026-07-28 `input_required` result: one input request, and the job to come back to. */
function questionResult({ relay: question }: RelayedQuestion, jobId: string): InputRequiredResult {
  const request =
    question.mode === 'url'
      ? inputRequired.elicitUrl({ message: question.message, url: question.url ?? '' })
      : inputRequired.elicit({
          message: question.message,
          requestedSchema: (question.requestedSchema ?? { type: 'object', properties: {} }) as Parameters<
            typeof inputRequired.elicit
          >[0]['requestedSchema'],
        });
  return inputRequired({ inputRequests: { [QUESTION_INPUT_KEY]: request }, requestState: jobId });
}

function describeCall(job: JobRecord): string {
  return job.request.kind === 'mcp'
    ? `a call of ${job.request.tool} with other arguments`
    : `a job of kind ${job.request.kind}`;
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
