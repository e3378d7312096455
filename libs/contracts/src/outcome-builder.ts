import {
  EXECUTED_BY_STATUS,
  type Executed,
  type OutcomeStatus,
  type StoredToolCallOutcome,
  storedOutcome,
} from './outcome.ts';
import type { Question } from './question.ts';
import { type TraceCarrier, traceIdOf } from './trace-carrier.ts';

/** The call an outcome belongs to: what of its tool-call job the outcome repeats. */
export interface OutcomeCall {
  jobId: string;
  toolCallId: string;
  server: string;
  tool: string;
  /** When the call was queued: its queue wait is measured from here. */
  enqueuedAt: number;
  trace?: TraceCarrier;
}

/** What is known about how a call ended; everything but `status` has a default. */
export interface OutcomeFacts {
  status: OutcomeStatus;
  /** What the model is told; omitted for a result whose text is its content. */
  text?: string;
  /** Attempts that reached the server (default 0: never sent). */
  attempts?: number;
  /** Default: what the status implies (EXECUTED_BY_STATUS). */
  executed?: Executed;
  error?: string;
  content?: StoredToolCallOutcome['content'];
  structuredContent?: Record<string, unknown>;
  truncated?: boolean;
  /** `input_required`: the tool's question. */
  question?: Question;
  /** The worker that settled the call; absent for outcomes decided without one. */
  workerId?: string;
  /** When a worker took the call, which ends its queue wait (default: when the outcome is built). */
  pickedUpAt?: number;
  /** When the request went to the server, which starts its run time (absent: never sent). */
  sentAt?: number;
  /** The per-attempt timeout the last attempt ran under. */
  timeoutMs?: number;
}

/**
 * The one way to build an outcome, worker and orchestrator alike (docs/semantics.md §5), in its stored
 * form: `text` only when it says more than the content, so a result's text is never stored twice.
 */
export function buildOutcome(
  call: OutcomeCall,
  facts: OutcomeFacts,
  now = Date.now(),
): StoredToolCallOutcome {
  const traceId = traceIdOf(call.trace);
  return storedOutcome({
    status: facts.status,
    executed: facts.executed ?? EXECUTED_BY_STATUS[facts.status],
    attempts: facts.attempts ?? 0,
    server: call.server,
    tool: call.tool,
    jobId: call.jobId,
    toolCallId: call.toolCallId,
    ...(facts.workerId ? { workerId: facts.workerId } : {}),
    queuedMs: Math.max(0, (facts.pickedUpAt ?? now) - call.enqueuedAt),
    runMs: facts.sentAt ? Math.max(0, now - facts.sentAt) : 0,
    ...(facts.timeoutMs !== undefined ? { timeoutMs: facts.timeoutMs } : {}),
    ...(traceId ? { traceId } : {}),
    ...(facts.text !== undefined ? { text: facts.text } : {}),
    content: facts.content ?? [],
    ...(facts.structuredContent ? { structuredContent: facts.structuredContent } : {}),
    truncated: facts.truncated ?? false,
    ...(facts.error ? { error: facts.error } : {}),
    ...(facts.question ? { question: facts.question } : {}),
    finishedAt: now,
    ...(facts.sentAt ? { startedAt: facts.sentAt } : {}),
  });
}
