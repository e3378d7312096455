import { type DetailedTaskV2, TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { Inject, Injectable } from '@nestjs/common';
import type { SwitchyardConfig } from '@switchyard/contracts';
import { z } from 'zod';
import type { Team } from '../auth/teams.service.ts';
import { ProblemException } from '../http/problem.ts';
import { InputStore } from '../jobs/input-store.ts';
import { type JobRecord, JobStore } from '../jobs/job-store.ts';
import { JobsService } from '../jobs/jobs.service.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG, LOGGER } from '../runtime/tokens.ts';
import { type GatewayCallParams, GatewayCalls } from './gateway-calls.ts';
import { GATEWAY_CALL_ID } from './gateway-jobs.ts';
import { taskView } from './task-view.ts';

const DAY_MS = 86_400_000;
/** Job ids are `job_<uuid>`; anything far longer is no task of ours, and is not echoed back whole. */
const TaskParams = z.looseObject({ taskId: z.string().min(1).max(200) });

/** The tasks extension in a server's capabilities (advertised on 2026-07-28 only, mcp-endpoint.ts). */
export const TASKS_CAPABILITY = { [TASKS_EXTENSION_ID_V2]: {} } as const;

/** Whether a 2026-07-28 request declares the tasks extension in its per-request client capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION_ID_V2] !== undefined;
}

/**
 * The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`) on /mcp (docs/semantics.md §16): a
 * tools/call that declares it is answered at once with a task, and the task IS the call's `mcp` job —
 * task id = job id (a random UUID, so unguessable), status read from the job (task-view.ts), cancel
 * through JobsService.cancel like `POST /v1/jobs/:id/cancel`. Nothing here is a second life cycle:
 * the call runs through GatewayCalls/GatewayJobs exactly as a blocking one does, only with no request
 * waiting for it. Every task request is checked against the calling team: another team's task id is
 * answered as an unknown one, with nothing of the job in it.
 */
@Injectable()
export class GatewayTasks {
  constructor(
    @Inject(GatewayCalls) private readonly calls: GatewayCalls,
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(JobsService) private readonly jobs: JobsService,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  /** tools/call answered with a task: admitted as any call, then run with nobody holding the request. */
  create(team: Team, params: GatewayCallParams, ctx: ServerContext, protocolVersion: string) {
    return this.calls.call(team, params, ctx, protocolVersion, async (call) => {
      this.calls.detach(call);
      const task = await this.view(call.job);
      call.log.info({ task_status: task.status }, 'MCP tool call answered with a task');
      // The extension's CreateTaskResult. The SDK passes a tools/call `resultType` other than
      // "complete" through unchanged; `content` only satisfies its tools/call result check.
      const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = task;
      return {
        resultType: 'task',
        content: [],
        taskId,
        status,
        ...(statusMessage ? { statusMessage } : {}),
        createdAt,
        lastUpdatedAt,
        ttlMs,
        ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
      } as CallToolResult;
    });
  }

  /** Installs tasks/get, tasks/update and tasks/cancel on a 2026-07-28 request's server. */
  register(server: Server, team: Team): void {
    server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, ctx) => {
      requireDeclared(ctx, 'tasks/get');
      return { resultType: 'complete', ...(await this.view(await this.owned(team, taskId, 'tasks/get'))) };
    });
    server.setRequestHandler('tasks/update', { params: TaskParams }, async ({ taskId }, ctx) => {
      requireDeclared(ctx, 'tasks/update');
      const job = await this.owned(team, taskId, 'tasks/update');
      // A gateway task asks its client nothing (its approval is an approver's), so no response can
      // match an outstanding input request: the spec says to ignore such responses and acknowledge.
      this.log.info(
        { job_id: job.id, team: team.name },
        'MCP tasks/update ignored: the task asks for no input',
      );
      return { resultType: 'complete' };
    });
    server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }, ctx) => {
      requireDeclared(ctx, 'tasks/cancel');
      await this.cancel(team, await this.owned(team, taskId, 'tasks/cancel'));
      return { resultType: 'complete' };
    });
  }

  /** Cancels the task's job by the one cancel path, as `POST /v1/jobs/:id/cancel` does (§6, §16). */
  private async cancel(team: Team, job: JobRecord): Promise<void> {
    try {
      await this.jobs.cancel(team, job.id);
      this.log.info({ job_id: job.id, team: team.name }, 'MCP client cancelled a task');
    } catch (error) {
      // Already ended: cancelling is cooperative and the task keeps the status it ended with.
      if (!(error instanceof ProblemException) || error.kind !== 'conflict') throw error;
      this.log.info({ job_id: job.id, team: team.name }, 'MCP tasks/cancel of a task that had ended');
    }
  }

  /** The team's own `mcp` job of that id; any other id (unknown, another team's, another kind) is none. */
  private async owned(team: Team, taskId: string, method: string): Promise<JobRecord> {
    const job = await this.store.getForTeam(taskId, team.name);
    if (job?.kind === 'mcp') return job;
    this.log.info(
      { team: team.name, method, task_id: taskId.slice(0, 80) },
      'MCP task request for no task of the team',
    );
    // The same answer whether the id exists for another team or not at all: nothing is confirmed.
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Failed to retrieve task: team ${team.name} has no task "${taskId.slice(0, 80)}" (a task id is the job id of one of the team's own /mcp calls)`,
    );
  }

  private async view(job: JobRecord): Promise<DetailedTaskV2> {
    const [call, inputs] = await Promise.all([
      this.store.toolCall(job.id, GATEWAY_CALL_ID),
      this.inputs.forJob(job.id),
    ]);
    return taskView({
      job,
      call,
      inputs: inputs.filter((input) => input.toolCallId === GATEWAY_CALL_ID),
      retentionMs: this.config.orchestrator.jobRetentionDays * DAY_MS,
      maxDeadlineMs: this.config.orchestrator.maxDeadlineMs,
      now: Date.now(),
    });
  }
}

/** The extension's methods are for requests that declare it (spec: -32021 otherwise). */
function requireDeclared(ctx: ServerContext, method: string): void {
  if (declaresTasks(ctx)) return;
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { ...TASKS_CAPABILITY } } },
    `${method} needs the ${TASKS_EXTENSION_ID_V2} extension in the request's client capabilities`,
  );
}
