import {
  type AttemptRecord,
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
  /**
   * The run as the sender measured it on its own monotonic clock (default: now − sentAt). Lets a worker
   * record its own duration while its timestamps are on the shared clock (ServerClock).
   */
  runMs?: number;
  /** The per-attempt timeout the last attempt ran under. */
  timeoutMs?: number;
  /**
   * The number of the attempt that settles the call (BullMQ's attemptsMade + 1). With `workerId` and
   * `pickedUpAt` it becomes the last record of the outcome's `attemptLog`.
   */
  attempt?: number;
  /** The records of the call's earlier attempts, oldest first (attempts that were retried). */
  earlierAttempts?: AttemptRecord[];
}

/** One attempt's record, as a worker writes it when the attempt ends (docs/semantics.md §5). */
export function attemptRecord(
  attempt: number,
  facts: { workerId?: string; pickedUpAt: number; sentAt?: number; error?: string },
  finishedAt = Date.now(),
): AttemptRecord {
  return {
    attempt,
    ...(facts.workerId ? { workerId: facts.workerId } : {}),
    pickedUpAt: facts.pickedUpAt,
    ...(facts.sentAt ? { startedAt: facts.sentAt } : {}),
    finishedAt: Math.max(finishedAt, facts.pickedUpAt),
    ...(facts.error ? { error: facts.error } : {}),
  };
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
  const attemptLog =
    facts.attempt !== undefined && facts.pickedUpAt !== undefined
      ? [
          ...(facts.earlierAttempts ?? []),
          attemptRecord(
            facts.attempt,
            {
              ...(facts.workerId ? { workerId: facts.workerId } : {}),
              pickedUpAt: facts.pickedUpAt,
              ...(facts.sentAt ? { sentAt: facts.sentAt } : {}),
            },
            now,
          ),
        ]
      : undefined;
  // The wait before the call's first attempt was picked up: retries and their backoff are in the log.
  const firstPickedUpAt = attemptLog?.[0]?.pickedUpAt ?? facts.pickedUpAt ?? now;
  return storedOutcome({
    status: facts.status,
    executed: facts.executed ?? EXECUTED_BY_STATUS[facts.status],
    attempts: facts.attempts ?? 0,
    server: call.server,
    tool: call.tool,
    jobId: call.jobId,
    toolCallId: call.toolCallId,
    ...(facts.workerId ? { workerId: facts.workerId } : {}),
    queuedMs: Math.max(0, firstPickedUpAt - call.enqueuedAt),
    runMs: facts.sentAt ? Math.max(0, facts.runMs ?? now - facts.sentAt) : 0,
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
    ...(attemptLog ? { attemptLog } : {}),
  });
}
