import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import type { DetailedTaskV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { InputRecord } from '../jobs/input-store.ts';
import { FINAL_STATUSES } from '../jobs/job-request.ts';
import type { JobRecord, ToolCallRecord } from '../jobs/job-store.ts';
import { endedWithoutOutcome, toCallToolResult, whetherItRan } from './outcome-result.ts';

/** Suggested polls: a call on its queue settles in seconds; a person decides in minutes or hours. */
export const WORKING_POLL_MS = 1_000;
export const WAITING_POLL_MS = 5_000;

/** What a task is made of: the job's own records, nothing kept for the task alone. */
export interface TaskFacts {
  job: JobRecord;
  /** The job's one call (GATEWAY_CALL_ID), once the life cycle has recorded it. */
  call: ToolCallRecord | undefined;
  /** The approvals and questions of the job's call. */
  inputs: InputRecord[];
  /** How long an ended job is kept (orchestrator.jobRetentionDays), in ms. */
  retentionMs: number;
  /** The longest a job may run (orchestrator.maxDeadlineMs). */
  maxDeadlineMs: number;
  now: number;
}

type Json = Readonly<Record<string, JsonValue>>;

/**
 * A job of kind `mcp` as the 2026-07-28 tasks extension's `DetailedTask` (docs/semantics.md §16). The
 * task is the job: its id, status and result are read from the job record, its call's outcome and its
 * pending approval, so every replica answers the same and nothing can disagree with `/v1/jobs/:id`.
 * queued/running → `working`; waiting for a person's approval → `input_required` (no input requests:
 * the decision is an approver's, on /v1 or in the console, which the status message names); ended →
 * `completed` with the CallToolResult the blocking path returns (a denial or an expiry is its isError
 * result that says the tool did not run); cancelled → `cancelled`.
 */
export function taskView(facts: TaskFacts): DetailedTaskV2 {
  const { job, call } = facts;
  const tool = job.request.kind === 'mcp' ? job.request.tool : 'the tool';
  const base = {
    taskId: job.id,
    createdAt: job.createdAt.toISOString(),
    lastUpdatedAt: new Date(lastUpdated(facts)).toISOString(),
    ttlMs: ttlMs(facts),
  };
  const outcome = call?.outcome ?? undefined;
  if (job.status === 'cancelled') {
    return {
      ...base,
      status: 'cancelled',
      statusMessage: outcome
        ? `job ${job.id} was cancelled: ${tool} ended ${outcome.status}. ${whetherItRan(outcome.executed)}`
        : `job ${job.id} was cancelled.`,
    };
  }
  if (FINAL_STATUSES.has(job.status)) {
    const result = outcome ? toCallToolResult(outcome, job.id) : endedWithoutOutcome(job.id, job.status);
    return {
      ...base,
      status: 'completed',
      statusMessage: outcome
        ? `${tool} ended ${outcome.status} (job ${job.id}). ${whetherItRan(outcome.executed)}`
        : `job ${job.id} ended ${job.status} without a recorded outcome.`,
      // The 2026-07-28 CallToolResult, as a blocking tools/call would have answered it.
      result: { resultType: 'complete', ...result } as unknown as Json,
    };
  }
  // The job's status decides, as on /v1: an approval recorded a moment before the job parked is
  // still `working`, so a client that sees `input_required` finds the job waiting for it.
  const approval =
    job.status === 'input_required'
      ? facts.inputs.find(
          (input) =>
            input.kind === 'approval' && input.state === 'pending' && input.expiresAt.getTime() > facts.now,
        )
      : undefined;
  if (approval) {
    return {
      ...base,
      status: 'input_required',
      statusMessage: `waiting for a person to approve ${tool} (job ${job.id}, call ${approval.toolCallId}): an approver decides with POST /v1/jobs/${job.id}/approvals/${approval.toolCallId} or in the console, by ${approval.expiresAt.toISOString()}`,
      // Nothing for the client to answer (tasks/update): the decision is not the caller's to make.
      inputRequests: {},
      pollIntervalMs: WAITING_POLL_MS,
    };
  }
  return {
    ...base,
    status: 'working',
    statusMessage:
      call?.status === 'dispatched'
        ? `${tool} is on its server's queue or running (job ${job.id})`
        : `job ${job.id} is ${job.status}`,
    pollIntervalMs: WORKING_POLL_MS,
  };
}

function lastUpdated({ job, call, inputs }: TaskFacts): number {
  const times = [job.createdAt, job.startedAt, job.finishedAt, call?.dispatchedAt, call?.finishedAt];
  for (const input of inputs) times.push(input.createdAt, input.decidedAt);
  return Math.max(...times.map((time) => time?.getTime() ?? 0));
}

/**
 * From creation to when the job may be deleted: its end plus the retention, or, while it runs, the
 * latest end its deadline allows plus the retention (an upper bound that shrinks once it ends).
 */
function ttlMs({ job, retentionMs, maxDeadlineMs }: TaskFacts): number {
  const created = job.createdAt.getTime();
  const end = job.finishedAt?.getTime() ?? (job.startedAt ?? job.createdAt).getTime() + maxDeadlineMs;
  return Math.max(0, Math.round(end - created + retentionMs));
}
