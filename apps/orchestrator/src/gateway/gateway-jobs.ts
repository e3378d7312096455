import { Inject, Injectable } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import type { LogLevel, Question, SwitchyardConfig, ToolCallOutcome } from '@switchyard/contracts';
import { TeamsService } from '../auth/teams.service.ts';
import { InputStore } from '../jobs/input-store.ts';
import { JobEndings } from '../jobs/job-endings.ts';
import { JobEvents } from '../jobs/job-events.ts';
import { type JobRecord, JobStore } from '../jobs/job-store.ts';
import type { Logger } from '../runtime/logger.ts';
import { CONFIG } from '../runtime/tokens.ts';
import type { CallContext } from '../tool-calls/call-context.ts';
import { UNCONTESTED_LEASE } from '../tool-calls/call-lease.ts';
import type { CallWait } from '../tool-calls/call-wait.ts';
import { ToolCallLifeCycle } from '../tool-calls/tool-call-life-cycle.ts';

/** A gateway job holds exactly one call, under this id (so its BullMQ id follows from the job id alone). */
export const GATEWAY_CALL_ID = 'call-1';
/** While a call waits for a person, its client hears that it still does this often (a progress notification). */
const WAIT_NOTICE_EVERY_MS = 15_000;
const NEVER = new AbortController().signal;

export interface GatewayRun {
  name: string;
  args: Record<string, unknown>;
  /** Aborts on the job's cancel (the client's or anyone's through /v1). */
  cancel: AbortSignal;
  /** Aborts when the client that waits goes away; the sweep's runs have none. */
  client?: AbortSignal;
  log: Logger;
  labels?: Record<string, string>;
  /** The least severe log level of the server's messages the client wants (none: no log is relayed). */
  logLevel?: LogLevel;
  /** Told when the call starts waiting for a person, and again now and then while it does. */
  onWait?: (wait: CallWait) => void;
  /**
   * What becomes of a question the tool asks (docs/semantics.md §16): `relay` hands it back to the
   * client that waits (a 2026-07-28 `input_required` result), `park` waits for the team's people as an
   * approval does; absent, the call ends `input_required` (a task, whose client cannot be asked yet).
   */
  questions?: 'relay' | 'park';
  /** With `relay`: the question modes the client can answer; a question of another mode is parked. */
  relayModes?: Question['mode'][];
}

/** The tool asked a question the client is to answer (GatewayRun.questions `relay`); the job waits for it. */
export interface RelayedQuestion {
  relay: Question;
  expiresAt: number;
}

/**
 * Runs the one call of a job of kind `mcp` through the tool-call life cycle and ends the job with it
 * (docs/semantics.md §16): an approval parks the job `input_required` like any other job's call, and
 * the request holding the client waits for the decision made on /v1 or in the console.
 */
@Injectable()
export class GatewayJobs {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(JobEndings) private readonly endings: JobEndings,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(ToolCallLifeCycle) private readonly calls: ToolCallLifeCycle,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
  ) {}

  async recordedOutcome(job: JobRecord): Promise<ToolCallOutcome | undefined> {
    return (await this.store.toolCall(job.id, GATEWAY_CALL_ID))?.outcome ?? undefined;
  }

  /**
   * The call's outcome, with the job ended by it; the question to relay, with the job waiting for its
   * answer; or undefined when the client went away while the call waited for a person (the job stays
   * `input_required`: a retry with the key, or the sweep, goes on).
   */
  async run(job: JobRecord, run: GatewayRun): Promise<ToolCallOutcome | RelayedQuestion | undefined> {
    const client = run.client ?? NEVER;
    const context = this.contextFor(job, run);
    for (;;) {
      const before = job.status;
      // The first start and a wake-up after a parked question store their status event with the move.
      if (before !== 'running')
        await this.events.publishWith(job.id, 'status', { status: 'running' }, async (event) =>
          Boolean(await this.store.markRunning(job.id, event)),
        );
      else await this.store.markRunning(job.id);
      const settled = await this.calls.execute(context, {
        id: GATEWAY_CALL_ID,
        name: run.name,
        args: run.args,
        position: 0,
      });
      if ('status' in settled) {
        await this.end(job, settled);
        run.log.info({ status: settled.status, executed: settled.executed }, 'MCP tool call settled');
        return settled;
      }
      const asked =
        settled.kind === 'question' && run.questions === 'relay'
          ? await this.inputs.lastQuestion(job.id, settled.toolCallId)
          : undefined;
      const question = asked?.state === 'pending' ? (asked.request as Question) : undefined;
      const relay = question !== undefined && (run.relayModes ?? ['form']).includes(question.mode);
      if (await this.inputs.park(job.id)) {
        const waits = [
          { kind: settled.kind, toolCallId: settled.toolCallId, server: settled.server, tool: settled.tool },
        ];
        await this.events.publish(job.id, 'status', { status: 'input_required', waits });
        run.log.info(
          { expires_at: new Date(settled.expiresAt).toISOString(), kind: settled.kind, relayed: relay },
          settled.kind === 'approval' ? 'MCP call waits for an approval' : 'MCP call waits for an answer',
        );
      }
      // The client answers by retrying with the answer and the job in requestState (gateway-calls.ts).
      if (relay) return { relay: question, expiresAt: settled.expiresAt };
      await this.untilDecided(job.id, settled, [run.cancel, client], run.onWait);
      if (client.aborted && !run.cancel.aborted) return undefined;
      job = (await this.store.get(job.id)) ?? job;
    }
  }

  /** Ends the job by its call's outcome: answered (ok or the tool's own error) is `succeeded`. */
  async end(job: JobRecord, outcome: ToolCallOutcome): Promise<void> {
    const answered = outcome.status === 'ok' || outcome.status === 'tool_error';
    const result = { status: outcome.status, executed: outcome.executed };
    await this.endings.end(
      job,
      answered ? 'succeeded' : 'failed',
      result,
      answered ? undefined : `${outcome.status}: ${outcome.text}`,
    );
  }

  private contextFor(job: JobRecord, run: GatewayRun): CallContext {
    // A team removed from the config since the call was made keeps no tools.
    const filter = this.teams.byName(job.team)?.config.tools ?? { allow: [], deny: [] };
    const startedAt = (job.startedAt ?? job.createdAt).getTime();
    return {
      job,
      filters: [filter],
      cancel: run.cancel,
      cancelReason: () => 'the MCP client cancelled the call',
      // The request holds the call; two requests for the same job (a retry) record the same outcome.
      lease: UNCONTESTED_LEASE,
      stop: run.cancel,
      log: run.log,
      deadlineAt: startedAt + this.config.orchestrator.maxDeadlineMs,
      // A tool's question is relayed to the client or waits for a person (run.questions); a task's call
      // ends `input_required` on one.
      waits: { approval: true, question: run.questions !== undefined },
      ...(run.labels ? { labels: run.labels } : {}),
      ...(run.logLevel ? { logLevel: run.logLevel } : {}),
      // The request's `mcp tools/call` span when a request carries the call (none for a detached task).
      span: trace.getActiveSpan(),
    };
  }

  /** Resolves once the approval or question is decided or expired, or one of `signals` aborts. */
  private untilDecided(
    jobId: string,
    wait: CallWait,
    signals: AbortSignal[],
    onWait: ((wait: CallWait) => void) | undefined,
  ): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        unwatch();
        clearTimeout(expiry);
        clearInterval(notices);
        for (const signal of signals) signal.removeEventListener('abort', finish);
        resolve();
      };
      const check = async () => {
        const record = await this.inputs.latest(jobId, wait.toolCallId, wait.kind);
        if (record?.state !== 'pending') finish();
      };
      // Any replica's decision publishes `input.answered` for the job; its announcement wakes us.
      const unwatch = this.events.watch(jobId, () => void check().catch(() => undefined));
      const expiry = setTimeout(finish, Math.min(2 ** 31 - 1, Math.max(0, wait.expiresAt - Date.now()) + 50));
      onWait?.(wait);
      const notices = setInterval(() => onWait?.(wait), WAIT_NOTICE_EVERY_MS);
      for (const signal of signals) {
        if (signal.aborted) finish();
        signal.addEventListener('abort', finish, { once: true });
      }
      // Decided between the gate and the watch: nothing more will announce it.
      void check().catch(() => undefined);
    });
  }
}
