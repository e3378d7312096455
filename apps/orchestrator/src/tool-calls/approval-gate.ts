import { Inject, Injectable } from '@nestjs/common';
import { argumentsDigest, needsApproval, type SwitchyardConfig } from '@switchyard/contracts';
import { TeamsService } from '../auth/teams.service.ts';
import type { ModelTool } from '../catalog/model-tool-catalog.ts';
import { type ApprovalDecision, InputStore } from '../jobs/input-store.ts';
import { JobEvents } from '../jobs/job-events.ts';
import { CONFIG } from '../runtime/tokens.ts';
import type { CallContext } from './call-context.ts';
import type { CallWait } from './call-wait.ts';

/** How the gate let a call through or not: `send`, a wait, or an ending the call is recorded with. */
export type GateVerdict =
  | { pass: true }
  /** To announce with the wait (`input_required`), once the call is recorded as awaiting approval. */
  | { pass: false; wait: CallWait; detail: Record<string, unknown> }
  | { pass: false; status: 'denied' | 'expired'; text: string; error: string };

/**
 * Approvals (docs/semantics.md §15): before a call that needs one is dispatched, a person approves the
 * exact arguments (by their digest), within the request's expiry. Nothing reaches the server before.
 */
@Injectable()
export class ApprovalGate {
  constructor(
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(TeamsService) private readonly teams: TeamsService,
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
  ) {}

  async check(
    context: CallContext,
    callId: string,
    tool: ModelTool,
    args: Record<string, unknown>,
  ): Promise<GateVerdict> {
    const server = this.config.servers[tool.server];
    const teamSetting = this.teams.byName(context.job.team)?.config.approval[tool.server];
    if (!server || !needsApproval(server, teamSetting, tool.tool, tool.definition.annotations)) {
      return { pass: true };
    }
    const digest = argumentsDigest(args);
    if (!context.waits.approval) {
      return {
        pass: false,
        status: 'denied',
        text: `${tool.name} needs a person's approval, and a batch job cannot wait for one; the call was not sent.`,
        error: 'approval_unavailable',
      };
    }
    const ttl = this.config.orchestrator.approvalTtlMs;
    const record = await this.inputs.ask({
      jobId: context.job.id,
      toolCallId: callId,
      kind: 'approval',
      round: 0,
      server: tool.server,
      tool: tool.tool,
      request: { arguments: args, digest },
      expiresAt: new Date(Math.min(Date.now() + ttl, context.deadlineAt)),
    });
    if (record.state === 'answered') {
      const decision = record.answer as ApprovalDecision;
      if (decision.decision === 'deny') {
        const reason = decision.reason ? `: ${decision.reason}` : '';
        return {
          pass: false,
          status: 'denied',
          text: `A person denied this call to ${tool.name}${reason}. It was not sent.`,
          error: 'approval_denied',
        };
      }
      // The approval names the arguments it saw; the call must be exactly that call.
      if (decision.digest !== digest) {
        return {
          pass: false,
          status: 'denied',
          text: `The approval given was for other arguments (${decision.digest}); this call (${digest}) was not sent.`,
          error: 'approval_digest_mismatch',
        };
      }
      return { pass: true };
    }
    if (await this.inputs.expireIfDue(record)) {
      return {
        pass: false,
        status: 'expired',
        text: `Nobody approved this call to ${tool.name} before its approval request expired; it was not sent.`,
        error: 'approval_expired',
      };
    }
    const wait: CallWait = {
      kind: 'approval',
      toolCallId: callId,
      server: tool.server,
      tool: tool.tool,
      expiresAt: record.expiresAt.getTime(),
    };
    return { pass: false, wait, detail: { arguments: args, digest } };
  }

  /** For SSE watchers, each time the run parks on the wait (a wake-up that finds it still open repeats it). */
  async announce(context: CallContext, wait: CallWait, detail: Record<string, unknown>): Promise<void> {
    await this.events.publish(context.job.id, 'input_required', {
      kind: wait.kind,
      toolCallId: wait.toolCallId,
      server: wait.server,
      tool: wait.tool,
      expiresAt: new Date(wait.expiresAt).toISOString(),
      ...detail,
    });
  }
}
