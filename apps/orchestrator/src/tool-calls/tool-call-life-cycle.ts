import { Inject, Injectable } from '@nestjs/common';
import { type Answer, type ToolCallOutcome, toolCallJobId } from '@switchyard/contracts';
import { ATTR, markJobCallOutcome, markOutcome } from '@switchyard/telemetry';
import { type ModelTool, ModelToolCatalog } from '../catalog/model-tool-catalog.ts';
import { localOutcome } from '../dispatch/local-outcome.ts';
import { ProgressListener } from '../dispatch/progress-listener.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import type { ToolCallRequest } from '../dispatch/tool-call-request.ts';
import { InputStore } from '../jobs/input-store.ts';
import { JobEvents, toolCallFinishedEvent } from '../jobs/job-events.ts';
import { type JobRecord, JobStore, type ToolCallRecord } from '../jobs/job-store.ts';
import { QueueEpochs } from '../jobs/queue-epochs.ts';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import { inSpan } from '../telemetry/spans.ts';
import { ApprovalGate } from './approval-gate.ts';
import type { CallContext } from './call-context.ts';
import { followCallProgress } from './call-progress.ts';
import type { CallWait } from './call-wait.ts';
import { LOST_ENTRY_ERROR, lostEntryDecision, lostEntryText, neverQueued } from './lost-queue-entry.ts';

export interface RequestedToolCall {
  id: string;
  /** Model-facing name, `<server>__<tool>`. */
  name: string;
  args: Record<string, unknown>;
  position: number;
}

/**
 * The one life cycle of a tool call, whichever door made it — an agent run, a batch job or /mcp
 * (docs/architecture.md §3): resolve the exact name under the team's and the job's filters, the approval
 * gate, record the call and its event in one statement, dispatch (quotas and fair share are the
 * dispatcher's), record the outcome and its event in one statement, and settle calls a lost run left
 * open. A call that already
 * has an outcome — the run was resumed or re-run after a crash — is answered from the record and never
 * dispatched again; one that was dispatched but not settled is re-dispatched under the same
 * deterministic job id, which finds the existing queue job instead of adding a second — or, once the
 * job is cancelled or past its deadline, settled from that queue job without starting it.
 */
@Injectable()
export class ToolCallLifeCycle {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
    @Inject(ApprovalGate) private readonly approvals: ApprovalGate,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(QueueEpochs) private readonly epochs: QueueEpochs,
    @Inject(ProgressListener) private readonly progress: ProgressListener,
  ) {}

  /** The call's one outcome, or — in an agent run — what it waits for a person on. */
  execute(context: CallContext, call: RequestedToolCall): Promise<ToolCallOutcome | CallWait> {
    return inSpan(
      `execute_tool ${call.name}`,
      {
        attributes: {
          [ATTR.GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR.GEN_AI_TOOL_NAME]: call.name,
          [ATTR.GEN_AI_TOOL_CALL_ID]: call.id,
          [ATTR.JOB_ID]: context.job.id,
        },
      },
      async (span) => {
        const outcome = await this.settle(context, call);
        if (isWait(outcome)) {
          span.setAttribute(ATTR.OUTCOME_STATUS, 'input_required');
          return outcome;
        }
        span.setAttributes({
          [ATTR.OUTCOME_STATUS]: outcome.status,
          [ATTR.OUTCOME_EXECUTED]: outcome.executed,
          [ATTR.ATTEMPTS]: outcome.attempts,
        });
        markOutcome(span, outcome.status, outcome.error);
        markJobCallOutcome(context.span, call.id, outcome.status);
        return outcome;
      },
    );
  }

  private async settle(context: CallContext, call: RequestedToolCall): Promise<ToolCallOutcome | CallWait> {
    const { job, lease } = context;
    const recorded = await this.store.toolCall(job.id, call.id);
    if (recorded?.outcome) return recorded.outcome;
    // A replica that lost the run starts nothing and writes nothing more for it: the replica holding
    // the lock dispatches the same call under the same id and records its true outcome. After a cancel
    // or the deadline nothing is started any more and the run may already have ended here, its lock
    // released (a run resumed past its deadline ends at once): Redis would call the lease lost and the
    // calls this run settles from their queue jobs would get no outcome, so only a known loss counts.
    if (context.cancel.aborted) lease.assertHeld();
    else await lease.confirm();

    const { tool, refused } = await this.catalog.resolve(call.name, context.filters, context.stop);
    lease.assertHeld();
    const target = {
      jobId: job.id,
      toolCallId: call.id,
      server: tool?.server ?? refused?.server ?? '',
      tool: tool?.tool ?? call.name,
      enqueuedAt: Date.now(),
      trace: { traceparent: job.traceparent },
    };
    const row = {
      jobId: job.id,
      toolCallId: call.id,
      position: call.position,
      modelTool: call.name,
      server: tool?.server ?? refused?.server ?? null,
      tool: tool?.tool ?? null,
      arguments: call.args,
    };

    // Whether the call has its row yet: outcomes are stored on it.
    let known = recorded !== undefined;
    let outcome: ToolCallOutcome;
    // A wait for the server's tool list that a cancel cut short is the cancel's doing.
    if (context.cancel.aborted && (!refused || refused.code === 'catalog_unpublished')) {
      // An earlier run of this job (a replica killed or frozen since) may have queued the call: then its
      // queue job, not this run's cancel, says whether it ran. Only a call never queued did not run.
      const queued = recorded
        ? await lease.race(this.settleQueued(job, recorded, context.cancelReason()))
        : undefined;
      const notRun = localOutcome(target, 'cancelled', 'The job was cancelled before this call ran.');
      outcome = queued ?? (recorded ? await this.withoutQueueJob(recorded, notRun) : notRun);
    } else if (refused) {
      outcome = localOutcome(target, refused.status, refused.text, refused.code, 'no');
    } else {
      const gate = await this.approvals.check(context, call.id, tool, call.args);
      if (!gate.pass && 'wait' in gate) {
        // Nothing was sent: the call says what it waits for, not `dispatched` (docs/semantics.md §15).
        lease.assertHeld();
        await this.store.recordCall(row, 'awaiting_approval');
        await this.approvals.announce(context, gate.wait, gate.detail);
        return gate.wait;
      }
      if (!gate.pass) {
        outcome = localOutcome(target, gate.status, gate.text, gate.error, 'no');
      } else {
        const answered = await this.answeredRound(context, call.id, tool.name);
        if ('status' in answered)
          outcome = localOutcome(target, 'expired', answered.text, answered.error, 'no');
        else if ('kind' in answered) return answered;
        else {
          // Round 0 is the call itself; an answered question's retry is a new, linked call
          // (`<id>~input-<round>`, its own deterministic queue job) carrying the answer.
          const roundId = roundCallId(call.id, answered.round);
          lease.assertHeld();
          // An earlier run dispatched it: its queue job is followed, or may have gone with Redis's data (§18).
          const earlier =
            recorded?.status === 'dispatched'
              ? await lease.race(this.earlierQueueJob(job, recorded, roundId, tool, target))
              : 'add';
          if (typeof earlier !== 'string') outcome = earlier;
          else {
            // Read before the add, stored with the `dispatched` record: a re-dispatch compares it.
            const epoch = await this.epochs.forDispatch(tool.server);
            lease.assertHeld();
            const dispatched = { id: call.id, tool: call.name, server: tool.server };
            await this.events.publishWith(job.id, 'tool_call.dispatched', dispatched, (event) =>
              this.store.recordCall(row, 'dispatched', event, epoch),
            );
            known = true;
            const stopProgress = followCallProgress(
              { jobId: job.id, toolCallId: call.id, roundId, server: tool.server, tool: tool.tool },
              { listener: this.progress, events: this.events, store: this.store, log: context.log },
            );
            const request: ToolCallRequest = {
              jobId: job.id,
              toolCallId: roundId,
              server: tool.server,
              tool: tool.tool,
              arguments: call.args,
              team: job.team,
              labels: { ...context.labels, team: job.team },
              ...(answered.answer ? { answer: answered.answer } : {}),
              ...(context.logLevel ? { logLevel: context.logLevel } : {}),
            };
            try {
              outcome = await lease.race(
                earlier === 'follow' && recorded
                  ? this.followEarlier(request, job, recorded, tool, target)
                  : this.dispatcher.dispatch(request),
              );
            } finally {
              // The held progress is stored before the outcome, which ends the call's bar.
              await stopProgress();
            }
            if (outcome.status === 'input_required' && outcome.question && context.waits.question) {
              lease.assertHeld();
              await this.store.recordCall(row, 'awaiting_input');
              return this.parkOnQuestion(context, call.id, outcome, answered.round + 1);
            }
          }
        }
      }
    }
    // Settled without reaching a queue (refused, denied, cancelled before): known from here on too.
    if (!known) {
      lease.assertHeld();
      await this.store.recordCall(row, 'admitted');
    }
    // Lost meanwhile: the replica holding the run now records this call, once, from the same queue job.
    // Asked, not assumed, when the dispatch outlasted the last confirmed extension: an outcome this
    // replica settled from a store it could not reach must not overwrite the new holder's.
    await lease.confirmUnlessFresh();
    await this.record(job, call.id, call.name, outcome);
    context.log.info(
      { tool_call_id: call.id, tool: call.name, status: outcome.status, attempts: outcome.attempts },
      'tool call settled',
    );
    return outcome;
  }

  /**
   * Settles the calls an earlier run dispatched and left open when the job was cancelled, or ran past its
   * deadline, while no replica ran it (the one running it was killed or frozen): each gets what its queue job says
   * — removed unsent (`cancelled`, executed `no`), cancelled on its worker, or its real result — and none
   * is started. Returns how many it settled.
   */
  async settleLeftOpen(job: JobRecord, reason: string): Promise<number> {
    const open = (await this.store.toolCalls(job.id)).filter((call) => !call.outcome);
    const requests = await Promise.all(open.map((recorded) => this.queuedRequest(job, recorded)));
    await this.dispatcher.refuse(
      requests.filter((request) => request !== undefined),
      reason,
    );
    // At once: a call whose server ignores the cancel must not hold up the others' outcomes.
    const settleOne = async (recorded: ToolCallRecord, request: ToolCallRequest | undefined) => {
      const existing = request
        ? await this.dispatcher.settleExisting(request, reason, { refused: true })
        : undefined;
      const outcome =
        existing ??
        (await this.withoutQueueJob(
          recorded,
          localOutcome(
            {
              jobId: job.id,
              toolCallId: recorded.toolCallId,
              server: recorded.server ?? '',
              tool: recorded.tool ?? recorded.modelTool,
              enqueuedAt: Date.now(),
            },
            'cancelled',
            `This call was not run: ${reason}.`,
            reason,
            'no',
          ),
        ));
      await this.record(job, recorded.toolCallId, recorded.modelTool, outcome);
    };
    await Promise.all(open.map((recorded, index) => settleOne(recorded, requests[index])));
    return open.length;
  }

  /** Records a call's outcome with its `tool_call.finished` event (one statement; the first outcome wins). */
  async record(job: JobRecord, callId: string, name: string, outcome: ToolCallOutcome): Promise<void> {
    const finished = toolCallFinishedEvent(callId, name, outcome);
    await this.events.publishWith(job.id, 'tool_call.finished', finished, (event) =>
      this.store.recordOutcome(job.id, callId, outcome, event),
    );
    this.metrics.toolCall(outcome, job.team);
  }

  /**
   * For a call an earlier run recorded `dispatched` and that is dispatched again: `follow` while its queue
   * job exists (never added again: a job Redis loses after this look must not come back as a new one and
   * run twice); `add` when it may be dispatched under its id — it provably never existed (same epoch) or
   * the call is idempotent; its outcome when the job is gone with Redis's data and the call must not run
   * again (non-idempotent, dispatched under an earlier Redis epoch: it may have run).
   */
  private async earlierQueueJob(
    job: JobRecord,
    recorded: ToolCallRecord,
    roundId: string,
    tool: ModelTool,
    target: Parameters<typeof localOutcome>[0],
  ): Promise<'follow' | 'add' | ToolCallOutcome> {
    if (await this.dispatcher.queue(tool.server).getJob(toolCallJobId(job.id, roundId))) return 'follow';
    // Read after the look at the queue: Redis losing its data between the two shows as another epoch.
    const { epoch } = await this.epochs.read(tool.server);
    const decision = lostEntryDecision({
      recordedEpoch: recorded.redisEpoch,
      currentEpoch: epoch,
      idempotent: tool.idempotent,
    });
    if (decision === 'add') return 'add';
    return localOutcome(
      target,
      'indeterminate',
      lostEntryText(tool.server, tool.tool),
      LOST_ENTRY_ERROR,
      'unknown',
    );
  }

  /**
   * The outcome of a call whose queue job an earlier run added: followed without adding; if the job went
   * between the look and the follow, the lost-entry rule decides again whether it may be added.
   */
  private async followEarlier(
    request: ToolCallRequest,
    job: JobRecord,
    recorded: ToolCallRecord,
    tool: ModelTool,
    target: Parameters<typeof localOutcome>[0],
  ): Promise<ToolCallOutcome> {
    const followed = await this.dispatcher.follow(request);
    if (followed) return followed;
    const earlier = await this.earlierQueueJob(job, recorded, request.toolCallId, tool, target);
    return typeof earlier === 'string' ? this.dispatcher.dispatch(request) : earlier;
  }

  /**
   * A call settled without starting it (cancel, deadline) whose queue job is not there: `notRun`, unless an
   * earlier run recorded it `dispatched` under another Redis epoch — then the job may have run and been
   * lost with Redis's data, and `executed` is unknown, not no.
   */
  private async withoutQueueJob(recorded: ToolCallRecord, notRun: ToolCallOutcome): Promise<ToolCallOutcome> {
    if (recorded.status !== 'dispatched' || !recorded.server) return notRun;
    const { epoch } = await this.epochs.read(recorded.server);
    if (neverQueued(recorded.redisEpoch, epoch)) return notRun;
    const call = {
      jobId: recorded.jobId,
      toolCallId: recorded.toolCallId,
      server: recorded.server,
      tool: recorded.tool ?? recorded.modelTool,
      enqueuedAt: recorded.dispatchedAt.getTime(),
    };
    return localOutcome(
      call,
      'cancelled',
      lostEntryText(call.server, call.tool),
      LOST_ENTRY_ERROR,
      'unknown',
    );
  }

  /**
   * The outcome of a call an earlier run recorded as dispatched, settled from its queue job without
   * starting it (docs/semantics.md §6); undefined when that run never queued it. The job to look at is
   * the call's latest round: the one an answered question led to, or the one that asked the open question.
   */
  private async settleQueued(
    job: JobRecord,
    recorded: ToolCallRecord,
    reason: string,
  ): Promise<ToolCallOutcome | undefined> {
    const request = await this.queuedRequest(job, recorded);
    return request ? this.dispatcher.settleExisting(request, reason) : undefined;
  }

  /** The queue job a dispatched call stands for: its latest round (see settleQueued); none if never queued. */
  private async queuedRequest(
    job: JobRecord,
    recorded: ToolCallRecord,
  ): Promise<ToolCallRequest | undefined> {
    if (!recorded.server || !recorded.tool) return undefined; // refused before dispatch: never queued
    const last = await this.inputs.lastQuestion(job.id, recorded.toolCallId);
    const round = !last ? 0 : last.state === 'answered' ? last.round : last.round - 1;
    return {
      jobId: job.id,
      toolCallId: roundCallId(recorded.toolCallId, round),
      server: recorded.server,
      tool: recorded.tool,
      arguments: recorded.arguments,
      team: job.team,
      labels: { team: job.team },
    };
  }

  /**
   * Where a call stands with its questions: the round to dispatch next (with the answer that round
   * carries), a wait for an open question, or an ending when the question expired unanswered.
   */
  private async answeredRound(
    context: CallContext,
    callId: string,
    name: string,
  ): Promise<
    { round: number; answer?: Answer } | CallWait | { status: 'expired'; text: string; error: string }
  > {
    const last = await this.inputs.lastQuestion(context.job.id, callId);
    if (!last) return { round: 0 };
    if (last.state === 'answered') return { round: last.round, answer: last.answer as Answer };
    if (await this.inputs.expireIfDue(last)) {
      return {
        status: 'expired',
        text: `Nobody answered the question ${name} asked before it expired; the call was not completed.`,
        error: 'question_expired',
      };
    }
    return {
      kind: 'question',
      toolCallId: callId,
      server: last.server,
      tool: last.tool,
      expiresAt: last.expiresAt.getTime(),
    };
  }

  /** The tool asked a person: the question is recorded (once) and the call waits for its answer. */
  private async parkOnQuestion(
    context: CallContext,
    callId: string,
    outcome: ToolCallOutcome,
    round: number,
  ): Promise<CallWait> {
    const question = outcome.question as NonNullable<ToolCallOutcome['question']>;
    const record = await this.inputs.ask({
      jobId: context.job.id,
      toolCallId: callId,
      kind: 'question',
      round,
      server: outcome.server,
      tool: outcome.tool,
      request: question,
      expiresAt: new Date(context.deadlineAt),
    });
    const wait: CallWait = {
      kind: 'question',
      toolCallId: callId,
      server: outcome.server,
      tool: outcome.tool,
      expiresAt: record.expiresAt.getTime(),
    };
    await this.approvals.announce(context, wait, { question, executed: outcome.executed });
    return wait;
  }
}

/** A call's queue id in question round `round`: round 0 is the call itself (docs/semantics.md §14). */
function roundCallId(callId: string, round: number): string {
  return round === 0 ? callId : `${callId}~input-${round}`;
}

function isWait(value: ToolCallOutcome | CallWait): value is CallWait {
  return 'kind' in value && 'expiresAt' in value;
}
