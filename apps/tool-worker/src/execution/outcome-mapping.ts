import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  type EffectiveTimeout,
  OUTCOME_DETAIL_BYTES,
  type OutcomeFacts,
  type OutcomeStatus,
  type Question,
  type ServerConfig,
  safeJson,
} from '@switchyard/contracts';
import type { CredentialError } from '../credentials/credential-error.ts';
import type { CallFailure } from './call-errors.ts';
import { firedLimit } from './fired-limit.ts';
import { capResult, cutToEncodedBytes, jsonDepthExceeds } from './result-cap.ts';

/** The facts of an outcome the processor decides; the worker's own fields are added by the processor. */
export type DecidedFacts = Omit<
  OutcomeFacts,
  'workerId' | 'pickedUpAt' | 'sentAt' | 'timeoutMs' | 'attemptLog'
>;

/** What ended an attempt that threw, as the processor saw it (the classes of call-errors.ts and the fence's). */
export type AttemptFailure =
  /** The job's lock is no longer this worker's (fence, hold, or an abort saying so). */
  | { kind: 'lock_lost' }
  /** A task recorded in the job is unknown to the server. */
  | { kind: 'task_lost'; message: string }
  /** The fenced marker found another worker's marker: the call was sent by someone else. */
  | { kind: 'already_sent' }
  /**
   * Fewer Redis replicas than required confirmed the at-most-once marker in time (worker.replicaWait):
   * not sent, the marker taken back.
   */
  | { kind: 'unreplicated'; message: string }
  /** Cancelled (explicitly, or by the job's deadline) with the reason the cancel named. */
  | { kind: 'aborted'; message: string }
  | { kind: 'credential'; error: CredentialError }
  /**
   * Any other error, classified by classifyCallError; `error` is kept for the limit that fired,
   * `abortReason` is what a cancel of this call named, `taskTimeoutMs` the task limit that fired.
   */
  | { kind: 'call'; failure: CallFailure; error: unknown; abortReason?: string; taskTimeoutMs?: number };

/** What is known about the attempt besides how it failed. */
export interface AttemptContext {
  server: string;
  tool: string;
  config: ServerConfig;
  idempotent: boolean;
  /** BullMQ attempts made before this one. */
  previousAttempts: number;
  /** This attempt is the job's last: no retry is left. */
  lastAttempt: boolean;
  /** The request was written (the fence passed and the send began). */
  sent: boolean;
  /** A task was created for this call: it is followed, never re-created. */
  taskCreated: boolean;
  /** The per-attempt timeout this attempt ran under. */
  timeout: EffectiveTimeout;
  /** The failure's detail as the outcome may quote it (already cut to its size). */
  detail: string;
}

/**
 * What the processor does next. `hold`: the job must still be ours (fence.hold) before the outcome is
 * recorded or the retry thrown; `unmark`: a non-idempotent call's marker is taken back before it goes
 * back on the queue.
 */
export type AttemptDecision =
  | { kind: 'leave'; sent: boolean }
  | { kind: 'put_back'; unmark: boolean; reason: string }
  /** `status`: what the attempt ended as (the outcome it would have been on the last attempt), for its spans. */
  | { kind: 'retry'; hold: true; reason: string; status: OutcomeStatus }
  | { kind: 'outcome'; hold: boolean; facts: DecidedFacts };

const RETRYABLE = new Set<CallFailure['kind']>(['timeout', 'transport', 'connection_lost']);

/**
 * The one mapping from how an attempt failed to what happens next: a pure function (no I/O, no clock),
 * so every failure kind × idempotency × last attempt is tested on its own (test/outcome-mapping.test.ts).
 */
export function decideFailure(what: AttemptFailure, context: AttemptContext): AttemptDecision {
  const { server, tool, idempotent, previousAttempts, sent } = context;
  const attempts = previousAttempts + 1;
  const name = `${server}/${tool}`;
  switch (what.kind) {
    case 'lock_lost':
      return { kind: 'leave', sent };
    case 'task_lost':
      return outcome(false, {
        status: 'indeterminate',
        attempts,
        text: `The call to ${name} ran as a task that the server no longer knows; it may or may not have finished, and it was not run again.`,
        error: what.message,
      });
    case 'already_sent':
      return outcome(false, {
        status: 'indeterminate',
        attempts,
        text: `The call to ${name} had already been sent by another worker, which was lost before it answered. It is not idempotent, so it was not run again; it may or may not have taken effect.`,
        error: 'already dispatched',
      });
    // Ended, not put back: while the replicas stay behind, another try would only wait again (and
    // hold up the worker's Redis connection); the caller may retry a call that provably did not run.
    case 'unreplicated':
      return outcome(true, {
        status: 'unavailable',
        executed: 'no',
        attempts: previousAttempts,
        text: `The call to ${name} was not sent: Redis replicas did not confirm its at-most-once marker in time (${what.message}), so a Redis failover could have let it run twice. It did not run.`,
        error: `replica_wait: ${what.message}`,
      });
    // Cancelled before the send; one that was sent is classified as a call (`cancelled`).
    case 'aborted':
      if (!sent) {
        return outcome(false, {
          status: 'cancelled',
          executed: 'no',
          attempts: previousAttempts,
          text: `The call to ${name} was cancelled before it was sent.`,
          error: what.message,
        });
      }
      break;
    case 'credential':
      // A 401 is the server refusing before it ran anything, even after one renewed credential; a team
      // session that did not start never got the call.
      return outcome(true, credentialFacts(what.error, name, sent ? attempts : previousAttempts));
    case 'call':
      break;
  }
  const failure: CallFailure =
    what.kind === 'aborted' ? { kind: 'cancelled', message: what.message } : what.failure;
  if (failure.kind === 'not_sent') {
    // Nothing reached the server, so even a non-idempotent call may go back on the queue.
    return { kind: 'put_back', unmark: !idempotent && sent, reason: context.detail };
  }
  // A created task is followed, never re-created: its handle is in the job, not a new attempt.
  if (idempotent && RETRYABLE.has(failure.kind) && !context.lastAttempt && !context.taskCreated) {
    return {
      kind: 'retry',
      hold: true,
      reason: `${name} attempt ${attempts}: ${context.detail}`,
      status: failedFacts(what, failure, context, attempts).status,
    };
  }
  return outcome(true, failedFacts(what, failure, context, attempts));
}

function failedFacts(
  what: AttemptFailure,
  failure: CallFailure,
  context: AttemptContext,
  attempts: number,
): DecidedFacts {
  const { server, tool, detail } = context;
  const name = `${server}/${tool}`;
  if (failure.kind === 'connection_lost' && !context.idempotent) {
    // The revision's rule (docs/semantics.md §11): a lost request is gone, never re-issued.
    return {
      status: 'indeterminate',
      attempts,
      text: `The call to ${name} was sent, but the connection to the server was lost before it answered. It is not idempotent, so it was not sent again; it may or may not have taken effect.`,
      error: detail,
    };
  }
  switch (failure.kind) {
    case 'timeout': {
      const taskLimit = what.kind === 'call' ? what.taskTimeoutMs : undefined;
      return {
        status: 'timeout',
        attempts,
        ...(taskLimit !== undefined
          ? {
              text: `The task ${name} did not finish within ${taskLimit} ms (tasks.maxDurationMs) and was cancelled; it may or may not have taken effect.`,
              error: detail,
            }
          : firedLimit(
              server,
              tool,
              what.kind === 'call' ? what.error : undefined,
              context.timeout,
              context.config,
            )),
      };
    }
    case 'cancelled': {
      // The cancel's own reason names what ended the call: an explicit cancel or the job's deadline.
      const reason =
        what.kind === 'aborted' ? what.message : (what.kind === 'call' && what.abortReason) || detail;
      return {
        status: 'cancelled',
        executed: 'unknown',
        attempts,
        text: `The call to ${name} was cancelled while it ran (${reason}); it may or may not have taken effect.`,
        error: reason,
      };
    }
    case 'invalid_params':
      return {
        status: 'invalid_arguments',
        executed: 'no',
        attempts,
        text: `Server ${server} rejected the arguments of ${tool}: ${detail}`,
        error: detail,
      };
    case 'refused':
      return {
        status: 'failed',
        executed: 'no',
        attempts,
        text: `Server ${server} refused the call to ${tool} before running it: ${detail}`,
        error: detail,
      };
    case 'unknown_tool':
      return {
        status: 'failed',
        executed: 'no',
        attempts,
        text: `Server ${server} does not know the tool "${tool}".`,
        error: detail,
      };
    default:
      return {
        status: 'failed',
        executed: 'unknown',
        attempts,
        text: `The call to ${name} failed: ${detail}`,
        error: detail,
      };
  }
}

/**
 * A call refused for its team's credential: never sent (or refused unrun), never retried. A server whose
 * authorization cannot be used at all is `unavailable` to the call, as a server without a healthy session.
 */
export function credentialFacts(error: CredentialError, name: string, attempts: number): DecidedFacts {
  return {
    status: error.problem === 'unavailable' ? 'unavailable' : 'failed',
    executed: 'no',
    attempts,
    text: `${capitalized(error.message)}; the call to ${name} was not run.`,
    error: `credential_${error.problem}`,
  };
}

function outcome(hold: boolean, facts: DecidedFacts): AttemptDecision {
  return { kind: 'outcome', hold, facts };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Results nested deeper are refused as protocol errors: they are the server's answer (the call ran), but
 * walking them blows the stack of every JSON consumer downstream (and PostgreSQL's jsonb).
 */
export const MAX_RESULT_DEPTH = 256;

/**
 * The outcome of an attempt the server answered: the call ran. A question nobody could answer yet ends
 * it `input_required` (docs/semantics.md §14); a result we cannot store is a protocol error, never
 * retried; anything else is kept, capped at the server's maxResultBytes.
 */
export function answerFacts(
  answer: CallToolResult,
  context: { server: string; tool: string; attempts: number; maxResultBytes: number; unanswered?: Question },
): DecidedFacts {
  const { server, tool, attempts } = context;
  if (context.unanswered) {
    const question = context.unanswered;
    const reply = cutToEncodedBytes(JSON.stringify(safeJson(answer.content ?? [])), OUTCOME_DETAIL_BYTES);
    return {
      status: 'input_required',
      executed: 'yes',
      attempts,
      text: `${server}/${tool} asks: ${question.message}`,
      question,
      error: `server reply to the cancelled question: ${reply}`,
    };
  }
  if (
    jsonDepthExceeds(answer.structuredContent, MAX_RESULT_DEPTH) ||
    jsonDepthExceeds(answer.content, MAX_RESULT_DEPTH)
  ) {
    return {
      status: 'failed',
      executed: 'yes',
      attempts,
      text: `${server}/${tool} answered with a result nested deeper than ${MAX_RESULT_DEPTH} levels; it ran, but its result was discarded.`,
      error: 'result_too_deep',
    };
  }
  // The server's bytes: text no store or model should choke on (NUL, lone surrogates) is replaced.
  const capped = capResult(
    {
      content: safeJson(answer.content),
      structuredContent: safeJson(structuredObject(answer.structuredContent)),
    },
    context.maxResultBytes,
  );
  return {
    status: answer.isError ? 'tool_error' : 'ok',
    attempts,
    content: capped.content,
    ...(capped.structuredContent ? { structuredContent: capped.structuredContent } : {}),
    truncated: capped.truncated,
  };
}

/**
 * 2026-07-28 lets `structuredContent` be any JSON value; outcomes keep an object only. A server that
 * returns an array or a scalar also returns it serialized in `content` (the spec's SHOULD), which is kept.
 */
function structuredObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
