import {
  EXECUTED_BY_STATUS,
  type Executed,
  type OutcomeStatus,
  type ToolCallJob,
  type ToolCallOutcome,
  traceIdOf,
} from '@switchyard/contracts';

export interface CallTiming {
  pickedUpAt: number;
  sentAt?: number;
}

/** Builds the one outcome a call ends with, with the bookkeeping fields DESIGN §5 asks for. */
export function buildOutcome(
  call: ToolCallJob,
  workerId: string,
  timing: CallTiming,
  fields: {
    status: OutcomeStatus;
    text: string;
    attempts: number;
    executed?: Executed;
    error?: string;
    content?: ToolCallOutcome['content'];
    structuredContent?: Record<string, unknown>;
    truncated?: boolean;
  },
): ToolCallOutcome {
  const finishedAt = Date.now();
  const traceId = traceIdOf(call.trace);
  return {
    status: fields.status,
    executed: fields.executed ?? EXECUTED_BY_STATUS[fields.status],
    attempts: fields.attempts,
    server: call.server,
    tool: call.tool,
    jobId: call.jobId,
    toolCallId: call.toolCallId,
    workerId,
    queuedMs: Math.max(0, timing.pickedUpAt - call.enqueuedAt),
    runMs: timing.sentAt ? finishedAt - timing.sentAt : 0,
    ...(traceId ? { traceId } : {}),
    text: fields.text,
    content: fields.content ?? [],
    ...(fields.structuredContent ? { structuredContent: fields.structuredContent } : {}),
    truncated: fields.truncated ?? false,
    ...(fields.error ? { error: fields.error } : {}),
    finishedAt,
  };
}
