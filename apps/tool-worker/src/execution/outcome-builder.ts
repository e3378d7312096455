import {
  EXECUTED_BY_STATUS,
  type Executed,
  type OutcomeStatus,
  type StoredToolCallOutcome,
  storedOutcome,
  type ToolCallJob,
  traceIdOf,
} from '@switchyard/contracts';

export interface CallTiming {
  pickedUpAt: number;
  sentAt?: number;
}

/**
 * Builds the one outcome a call ends with, with the bookkeeping fields DESIGN §5 asks for, in its
 * stored form: `text` only when it says more than the content (a result's text is not stored twice).
 */
export function buildOutcome(
  call: ToolCallJob,
  workerId: string,
  timing: CallTiming,
  fields: {
    status: OutcomeStatus;
    text?: string;
    attempts: number;
    executed?: Executed;
    error?: string;
    content?: StoredToolCallOutcome['content'];
    structuredContent?: Record<string, unknown>;
    truncated?: boolean;
  },
): StoredToolCallOutcome {
  const finishedAt = Date.now();
  const traceId = traceIdOf(call.trace);
  return storedOutcome({
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
    ...(fields.text !== undefined ? { text: fields.text } : {}),
    content: fields.content ?? [],
    ...(fields.structuredContent ? { structuredContent: fields.structuredContent } : {}),
    truncated: fields.truncated ?? false,
    ...(fields.error ? { error: fields.error } : {}),
    finishedAt,
  });
}
