import {
  EXECUTED_BY_STATUS,
  type Executed,
  type OutcomeStatus,
  type ToolCallOutcome,
  type TraceCarrier,
  traceIdOf,
} from '@switchyard/contracts';

export interface LocalCall {
  jobId: string;
  toolCallId: string;
  server: string;
  tool: string;
  enqueuedAt: number;
  trace?: TraceCarrier;
}

/** An outcome decided on the orchestrator side, without a worker (never sent, cancelled, lost). */
export function localOutcome(
  call: LocalCall,
  status: OutcomeStatus,
  text: string,
  error?: string,
  executed: Executed = EXECUTED_BY_STATUS[status],
): ToolCallOutcome {
  const now = Date.now();
  const traceId = traceIdOf(call.trace);
  return {
    status,
    executed,
    attempts: 0,
    server: call.server,
    tool: call.tool,
    jobId: call.jobId,
    toolCallId: call.toolCallId,
    queuedMs: Math.max(0, now - call.enqueuedAt),
    runMs: 0,
    ...(traceId ? { traceId } : {}),
    text,
    content: [],
    truncated: false,
    ...(error ? { error } : {}),
    finishedAt: now,
  };
}
