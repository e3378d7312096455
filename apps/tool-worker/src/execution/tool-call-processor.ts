import {
  type ArgumentValidator,
  type AttemptRecord,
  attemptRecord,
  buildOutcome,
  type Clock,
  isIdempotent,
  OUTCOME_DETAIL_BYTES,
  type OutcomeStatus,
  type ServerConfig,
  type StoredToolCallOutcome,
  type ToolCallJob,
  ToolCallJobSchema,
  toolQueueName,
} from '@switchyard/contracts';
import { DelayedError, type Job } from 'bullmq';
import { CredentialError } from '../credentials/credential-error.ts';
import type { CredentialSource } from '../credentials/credential-source.ts';
import type { TeamCredentials } from '../credentials/team-credentials.ts';
import type { TeamSessions } from '../credentials/team-sessions.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { type CallFailure, classifyCallError } from './call-errors.ts';
import { type CallPolicy, resolveCallPolicy } from './call-policy.ts';
import { CallQuestions } from './call-questions.ts';
import { AlreadySentError, type AttemptState, sendCall, UnreplicatedMarkerError } from './call-send.ts';
import { type AttemptMcpSpan, inConsumerSpan } from './call-spans.ts';
import type { CallTimeouts } from './call-timeouts.ts';
import { CallAbort, type InFlightCalls } from './in-flight-calls.ts';
import type { JobFence } from './job-fence.ts';
import {
  type AttemptFailure,
  answerFacts,
  credentialFacts,
  type DecidedFacts,
  decideFailure,
} from './outcome-mapping.ts';
import { dispatchMarker, preSendChecks } from './pre-send-checks.ts';
import type { LogRelay, ProgressRelay } from './progress-relay.ts';
import { cutToEncodedBytes } from './result-cap.ts';
import { TaskHandleSchema, TaskLostError, TaskTimeoutError } from './task-runner.ts';

/** Thrown to make BullMQ retry an idempotent call with the job's backoff. */
export class RetryableCallError extends Error {
  override name = 'RetryableCallError';
  /** What this attempt ended as (`timeout`, `failed`, …): its spans' error.type. */
  constructor(
    message: string,
    readonly status: OutcomeStatus,
  ) {
    super(message);
  }
}

/**
 * Thrown when the job is no longer this worker's: BullMQ treats a DelayedError as "the processor moved
 * the job itself", so it neither fails nor completes it; its new owner settles it.
 */
export class LockLostError extends DelayedError {
  override name = 'LockLostError';
}

/** How long a picked-up call waits before another look when this worker's session is not ready. */
const NOT_READY_REDELIVERY_MS = 250;

/** Most JSON bytes of a retried attempt's reason in its record: 20 attempts stay within the envelope. */
const ATTEMPT_ERROR_BYTES = 200;

export interface ProcessorDeps {
  server: string;
  config: ServerConfig;
  session: ManagedSession;
  validator: ArgumentValidator;
  credentials: TeamCredentials;
  /** Set for a stdio server with per-team secrets (servers.<name>.auth). */
  teamSessions?: TeamSessions | undefined;
  workerId: string;
  log: Logger;
  fence: JobFence;
  inFlight: InFlightCalls;
  /** Forwards the server's progress notifications of calls whose producer waits for them. */
  relayProgress?: ProgressRelay;
  /** Forwards the server's log messages of calls whose caller asked for them (ToolCallJob.logLevel). */
  relayLog?: LogRelay;
  timeouts: CallTimeouts;
  /**
   * The store's clock (ServerClock): the orchestrator stamped the call's enqueuedAt and deadline on it, so the
   * pick-up time that is compared with them, and every time an outcome records, are read from it too.
   */
  clock: Clock;
}

/**
 * The BullMQ processor of one server's queue. It returns the call's outcome (the job's return value)
 * for every final result, and throws only to ask BullMQ for a retry of an idempotent call or to put a
 * call that was never sent back on the queue. Its rooms: the checks before the send
 * (pre-send-checks.ts), the send with its fence (call-send.ts), and the pure mapping of what happened
 * to an outcome (outcome-mapping.ts).
 */
export function createToolCallProcessor(deps: ProcessorDeps) {
  const { server, config, session, validator, workerId, fence } = deps;

  async function processToolCall(job: Job, token?: string): Promise<StoredToolCallOutcome> {
    const pickedUpAt = deps.clock.now();
    const parsed = ToolCallJobSchema.safeParse(job.data);
    if (!parsed.success) {
      return malformedJobOutcome(job, server, workerId, parsed.error.message, pickedUpAt);
    }
    const call = parsed.data;
    const lockToken = token ?? '';
    const inFlight = deps.inFlight.register(job, lockToken);
    try {
      return await inConsumerSpan(toolQueueName(server), job.id, call, (_span, mcpSpan) =>
        settle(job, call, pickedUpAt, token, lockToken, inFlight, mcpSpan),
      );
    } finally {
      deps.inFlight.release(job, inFlight);
    }
  }

  async function settle(
    job: Job,
    call: ToolCallJob,
    pickedUpAt: number,
    token: string | undefined,
    lockToken: string,
    inFlight: { controller: AbortController },
    mcpSpan: AttemptMcpSpan,
  ): Promise<StoredToolCallOutcome> {
    // trace_id and span_id come from the active span (see runtime/logger.ts).
    const log = deps.log.child({
      server,
      tool: call.tool,
      job_id: call.jobId,
      tool_call_id: call.toolCallId,
      bull_job_id: job.id,
    });
    log.debug({ attemptsStarted: job.attemptsStarted }, 'tool call picked up');
    const previousAttempts = job.attemptsMade;
    const attempts = previousAttempts + 1;
    // Only a retried call has earlier records (written before its retry was asked for): one read.
    const earlierAttempts: AttemptRecord[] =
      previousAttempts > 0 ? await fence.earlierAttempts(job).catch(() => []) : [];
    const marker = dispatchMarker(job.progress);
    const recordedTask =
      marker?.task === undefined ? undefined : TaskHandleSchema.safeParse(marker.task).data;
    const state: AttemptState = { lockSetAt: job.processedOn, taskCreated: recordedTask !== undefined };
    const annotations = session.tool(call.tool)?.annotations;
    const idempotent = call.idempotent && isIdempotent(config, call.tool, annotations);
    // Resolved once the call passed its checks; the outcome records its per-attempt timeout once sent.
    let policy: CallPolicy | undefined;
    // A send made here is timed here, on the monotonic clock; a resumed task began on another worker,
    // so its run is counted on the shared clock from the marker's time.
    const localRunMs = () =>
      state.sentMonoMs !== undefined
        ? Math.round(performance.now() - state.sentMonoMs)
        : Math.max(0, deps.clock.now() - (state.sentAt ?? deps.clock.now()));
    const outcome = (facts: DecidedFacts) =>
      buildOutcome(
        call,
        {
          ...facts,
          workerId,
          pickedUpAt,
          attempt: attempts,
          earlierAttempts,
          ...(state.sentAt ? { sentAt: state.sentAt } : {}),
          ...(state.sentMonoMs !== undefined ? { runMs: localRunMs() } : {}),
          ...(state.sentAt && policy ? { timeoutMs: policy.timeout.timeoutMs } : {}),
        },
        deps.clock.now(),
      );

    const verdict = preSendChecks({
      call,
      server,
      config,
      session,
      validator,
      idempotent,
      marker,
      recordedTask,
      previousAttempts,
      pickedUpAt,
    });
    if (verdict.kind === 'put_back') return putBack(job, token, log, verdict.reason);
    if (verdict.kind === 'outcome') {
      if (verdict.log) log.warn(verdict.log, 'non-idempotent call re-delivered after its worker was lost');
      return outcome(verdict.facts);
    }
    if (recordedTask) {
      // The job's previous owner created the task and was lost: follow that task, never start another.
      state.sentAt = marker?.dispatchedAt;
      log.info({ task_id: recordedTask.taskId, previousWorker: marker?.dispatchedBy }, 'resuming task');
    }

    // The team's credential is settled before anything is sent: a team without one, or whose token cannot
    // be obtained, ends here without reaching the server (and without a retry that would fail the same way).
    let credential: CredentialSource | undefined;
    try {
      credential = deps.credentials.forCall(server, call.team);
      await credential?.current();
      deps.teamSessions?.check(call.team);
    } catch (error) {
      if (error instanceof CredentialError) return credentialRefused(error, previousAttempts);
      return putBack(job, token, log, `credential store unreachable: ${(error as Error).message}`);
    }

    policy = await resolveCallPolicy(call, job, config, deps.timeouts);
    const lastAttempt = attempts >= policy.maxAttempts;
    const questions = new CallQuestions(call.answer, config.elicitation);
    let result: Awaited<ReturnType<typeof sendCall>>;
    try {
      result = await sendCall({
        deps,
        job,
        call,
        lockToken,
        signal: inFlight.controller.signal,
        log,
        idempotent,
        attempts,
        plan: verdict.plan,
        recordedTask,
        credential,
        policy,
        questions,
        state,
        mcpSpan,
      });
    } catch (error) {
      return failed(error, policy, lastAttempt);
    }
    const runMs = localRunMs();
    // Only answers that are results teach the adaptive timeout: a tool error may be a quick refusal.
    if (!result.isError) deps.timeouts.recordSuccess(call.tool, runMs);
    await holdOrLeave();
    log.info(
      { isError: result.isError === true, runMs, timeoutMs: policy.timeout.timeoutMs },
      'tool call finished',
    );
    if (questions.unanswered) {
      log.info(
        { mode: questions.unanswered.mode },
        'the server asked a person; the call ends input_required',
      );
    }
    return outcome(
      answerFacts(result, {
        server,
        tool: call.tool,
        attempts,
        maxResultBytes: config.maxResultBytes,
        ...(questions.unanswered ? { unanswered: questions.unanswered } : {}),
      }),
    );

    /**
     * Before an outcome is recorded: the job must still be ours. A lock that expired while Redis (or
     * this worker) was paused is taken back if nobody took the job meanwhile, so a result this worker
     * holds is kept; otherwise the next owner's `indeterminate` is the truth and nothing is recorded.
     * BullMQ's own moveToCompleted also refuses a lock that is not ours ("Missing lock"), and the
     * 'completed' event (our notification) only follows a successful move.
     */
    async function holdOrLeave(): Promise<void> {
      if (inFlight.controller.signal.reason instanceof CallAbort) {
        if (inFlight.controller.signal.reason.kind === 'lock_lost') leave('lock lost while the call ran');
      }
      // A non-idempotent call is always held (one round trip): if Redis pauses while it runs, its
      // completion would otherwise reach Redis after the lock expired and the result be lost to an
      // `indeterminate`. An idempotent call only when its lock may have expired: losing it costs a re-run.
      if (idempotent && !fence.mayHaveExpired(state.lockSetAt)) return;
      if (!(await fence.hold(job, lockToken))) leave('lock lost while the call ran');
    }

    function leave(reason: string): never {
      log.warn({ reason, attempts }, 'job no longer ours: no outcome recorded');
      throw new LockLostError(reason);
    }

    function credentialRefused(error: CredentialError, counted: number): StoredToolCallOutcome {
      log.warn(
        { problem: error.problem, team: error.team, attempts: counted },
        'tool call refused: credential',
      );
      return outcome(credentialFacts(error, `${server}/${call.tool}`, counted));
    }

    /** Names what ended the attempt (the order matters: a lost lock outranks everything), then acts on it. */
    function abortOf(error: unknown): CallAbort | undefined {
      const abort = error instanceof CallAbort ? error : inFlight.controller.signal.reason;
      return abort instanceof CallAbort ? abort : undefined;
    }

    function failureOf(error: unknown): { what: AttemptFailure; detail: string } {
      const abort = abortOf(error);
      const aborted = abort !== undefined;
      const detailOf = (message: string) => cutToEncodedBytes(message, OUTCOME_DETAIL_BYTES);
      if (abort?.kind === 'lock_lost') return { what: { kind: 'lock_lost' }, detail: '' };
      if (abort?.kind === 'unreachable') {
        // Still ours (failed() held it): not sent → back on the queue; sent → a connection lost mid-call
        // (an idempotent call is retried, a non-idempotent one `indeterminate`), never `cancelled`.
        const failure: CallFailure =
          state.sentAt === undefined
            ? { kind: 'not_sent', message: abort.message }
            : { kind: 'connection_lost', message: abort.message };
        return {
          what: { kind: 'call', failure, error, abortReason: abort.message },
          detail: detailOf(abort.message),
        };
      }
      if (error instanceof TaskLostError) {
        return { what: { kind: 'task_lost', message: error.message }, detail: error.message };
      }
      if (error instanceof AlreadySentError) return { what: { kind: 'already_sent' }, detail: '' };
      if (error instanceof UnreplicatedMarkerError) {
        return { what: { kind: 'unreplicated', message: error.message }, detail: error.message };
      }
      if (state.sentAt === undefined && aborted) {
        return { what: { kind: 'aborted', message: abort.message }, detail: abort.message };
      }
      if (error instanceof CredentialError) return { what: { kind: 'credential', error }, detail: '' };
      const failure = classifyCallError(error, aborted);
      return {
        what: {
          kind: 'call',
          failure,
          error,
          ...(aborted ? { abortReason: abort.message } : {}),
          ...(error instanceof TaskTimeoutError ? { taskTimeoutMs: error.limitMs } : {}),
        },
        detail: detailOf(failure.message),
      };
    }

    async function failed(
      error: unknown,
      policy: CallPolicy,
      lastAttempt: boolean,
    ): Promise<StoredToolCallOutcome> {
      // Aborted because Redis was silent past the lock: once it answers, the job is either still ours
      // (Redis itself had paused: nobody could take it) and the abort is an attempt that failed like a
      // lost connection, or another worker's, and we leave it to its next owner.
      if (abortOf(error)?.kind === 'unreachable' && !(await fence.hold(job, lockToken).catch(() => false)))
        leave('Redis was unreachable past the lock, and the job is no longer ours');
      const { what, detail } = failureOf(error);
      const sent = state.sentAt !== undefined;
      if (what.kind === 'call') {
        log.warn(
          { failure: what.failure.kind, err: detail, attempts, idempotent, lastAttempt },
          'tool call failed',
        );
      }
      if (what.kind === 'task_lost')
        log.warn({ attempts, err: detail }, 'the recorded task is gone from the server');
      if (what.kind === 'unreplicated') {
        log.warn(
          { attempts, ...(error as UnreplicatedMarkerError).detail },
          'replicas did not confirm the at-most-once marker: call not sent',
        );
      }
      if (what.kind === 'already_sent') {
        log.warn({ attempts }, 'a marker appeared before the send: the call was sent by another worker');
      }
      const decision = decideFailure(what, {
        server,
        tool: call.tool,
        config,
        idempotent,
        previousAttempts,
        lastAttempt,
        sent,
        taskCreated: state.taskCreated,
        timeout: policy.timeout,
        detail,
      });
      switch (decision.kind) {
        case 'leave':
          if (!decision.sent) {
            log.warn({ attempts }, 'lock lost before the send: call not sent, no outcome recorded');
            throw new LockLostError('lock lost before the send');
          }
          return leave('lock lost while the call ran');
        case 'put_back':
          if (decision.unmark && !(await fence.unmark(job, lockToken))) {
            leave('lock lost before the call could go back on the queue');
          }
          return putBack(job, token, log, decision.reason);
        case 'retry': {
          await holdOrLeave();
          // The retry's next attempt is another run of this job: it reads this record back.
          const record = attemptRecord(
            attempts,
            {
              workerId,
              pickedUpAt,
              ...(state.sentAt ? { sentAt: state.sentAt } : {}),
              error: cutToEncodedBytes(detail, ATTEMPT_ERROR_BYTES),
            },
            deps.clock.now(),
          );
          if (!(await fence.recordAttempts(job, lockToken, [...earlierAttempts, record]))) {
            leave('lock lost before the retry');
          }
          throw new RetryableCallError(decision.reason, decision.status);
        }
        case 'outcome':
          if (decision.hold) await holdOrLeave();
          if (what.kind === 'credential') {
            log.warn(
              { problem: what.error.problem, team: what.error.team, attempts: decision.facts.attempts },
              'tool call refused: credential',
            );
          }
          return outcome(decision.facts);
      }
    }
  }

  return processToolCall;
}

/** Returns a call that this worker cannot send right now to the queue, for a worker that can. */
async function putBack(job: Job, token: string | undefined, log: Logger, reason: string): Promise<never> {
  log.info({ reason }, 'call put back on the queue');
  await job.moveToDelayed(Date.now() + NOT_READY_REDELIVERY_MS, token);
  throw new DelayedError();
}

function malformedJobOutcome(
  job: Job,
  server: string,
  workerId: string,
  reason: string,
  pickedUpAt: number,
): StoredToolCallOutcome {
  const data = (job.data ?? {}) as Partial<ToolCallJob>;
  return buildOutcome(
    {
      jobId: String(data.jobId ?? job.id),
      toolCallId: String(data.toolCallId ?? job.id),
      server,
      tool: String(data.tool ?? 'unknown'),
      // Unreadable as it is, the job's own enqueue time cannot be trusted: no queue wait is claimed.
      enqueuedAt: pickedUpAt,
    },
    {
      status: 'failed',
      executed: 'no',
      workerId,
      pickedUpAt,
      attempt: job.attemptsMade + 1,
      text: 'The tool call job was malformed and was not run.',
      error: cutToEncodedBytes(`malformed job data: ${reason}`, OUTCOME_DETAIL_BYTES),
    },
    pickedUpAt,
  );
}
