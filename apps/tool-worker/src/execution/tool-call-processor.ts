import type { CallToolResult } from '@modelcontextprotocol/client';
import {
  type ArgumentValidator,
  buildOutcome,
  carrierFrom,
  type EffectiveTimeout,
  isIdempotent,
  OUTCOME_DETAIL_BYTES,
  type OutcomeFacts,
  type Question,
  type ServerConfig,
  type StoredToolCallOutcome,
  safeJson,
  type ToolCallJob,
  ToolCallJobSchema,
  type TraceCarrier,
  toolQueueName,
} from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import { DelayedError, type Job } from 'bullmq';
import { CredentialError } from '../credentials/credential-error.ts';
import { callCredential } from '../credentials/credential-fetch.ts';
import type { CredentialSource } from '../credentials/credential-source.ts';
import type { TeamCredentials } from '../credentials/team-credentials.ts';
import type { TeamSessions } from '../credentials/team-sessions.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { classifyCallError } from './call-errors.ts';
import { CallQuestions } from './call-questions.ts';
import { inConsumerSpan, inMcpCallSpan } from './call-spans.ts';
import type { CallTimeouts } from './call-timeouts.ts';
import { ExtensionTaskRunner } from './extension-task-runner.ts';
import { firedLimit } from './fired-limit.ts';
import { CallAbort, type InFlightCalls } from './in-flight-calls.ts';
import type { JobFence } from './job-fence.ts';
import type { ProgressRelay } from './progress-relay.ts';
import { refusedForTasks } from './refused-for-tasks.ts';
import { capResult, cutToEncodedBytes, jsonDepthExceeds } from './result-cap.ts';
import {
  TaskHandleSchema,
  TaskLostError,
  type TaskRunDeps,
  TaskRunner,
  TaskTimeoutError,
  taskPlan,
} from './task-runner.ts';

/** When this worker took the call and when it sent it: the outcome's queue wait and run time. */
interface CallTiming {
  pickedUpAt: number;
  sentAt?: number;
}

/** Job progress doubles as the at-most-once marker: it is written before a non-idempotent call is sent. */
interface DispatchMarker {
  dispatchedBy: string;
  dispatchedAt: number;
  /** A task's handle, recorded once the server created it: the call is resumable (task-runner.ts). */
  task?: unknown;
}

function dispatchMarker(progress: unknown): DispatchMarker | undefined {
  if (progress && typeof progress === 'object' && 'dispatchedBy' in progress)
    return progress as DispatchMarker;
  return undefined;
}

/** Thrown to make BullMQ retry an idempotent call with the job's backoff. */
export class RetryableCallError extends Error {
  override name = 'RetryableCallError';
}

/**
 * Thrown when the job is no longer this worker's: BullMQ treats a DelayedError as "the processor moved
 * the job itself", so it neither fails nor completes it; its new owner settles it.
 */
export class LockLostError extends DelayedError {
  override name = 'LockLostError';
}

/** The fenced marker found another worker's marker: the call was sent by someone else. */
class AlreadySentError extends Error {
  override name = 'AlreadySentError';
}

/**
 * Deeper results are refused as protocol errors: they are the server's answer (the call ran), but
 * walking them blows the stack of every JSON consumer downstream (and PostgreSQL's jsonb).
 */
const MAX_RESULT_DEPTH = 256;

/** How long a picked-up call waits before another look when this worker's session is not ready. */
const NOT_READY_REDELIVERY_MS = 250;

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
  timeouts: CallTimeouts;
}

/**
 * The BullMQ processor of one server's queue. It returns the call's outcome (the job's return value)
 * for every final result, and throws only to ask BullMQ for a retry of an idempotent call or to put a
 * call that was never sent back on the queue.
 */
export function createToolCallProcessor(deps: ProcessorDeps) {
  const { server, config, session, validator, workerId, fence } = deps;

  async function processToolCall(job: Job, token?: string): Promise<StoredToolCallOutcome> {
    const timing: CallTiming = { pickedUpAt: Date.now() };
    const parsed = ToolCallJobSchema.safeParse(job.data);
    if (!parsed.success) {
      return malformedJobOutcome(job, server, workerId, parsed.error.message, timing);
    }
    const call = parsed.data;
    const lockToken = token ?? '';
    const inFlight = deps.inFlight.register(job, lockToken);
    try {
      return await inConsumerSpan(toolQueueName(server), job.id, call, () =>
        settle(job, call, timing, token, lockToken, inFlight),
      );
    } finally {
      deps.inFlight.release(job, inFlight);
    }
  }

  /**
   * The window that remains: a stall between the fenced marker (beforeSend) and the request being
   * written. If this worker freezes exactly there past its lock, the next owner finds the marker and
   * reports `indeterminate` (executed unknown) without sending; the frozen worker then sends once when
   * it wakes, and cannot record anything (its lock is gone). So the call runs at most once and the
   * outcome stays truthful: "may or may not have run" covers the late send.
   */
  async function settle(
    job: Job,
    call: ToolCallJob,
    timing: CallTiming,
    token: string | undefined,
    lockToken: string,
    inFlight: { controller: AbortController },
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
    const marker = dispatchMarker(job.progress);
    const recordedTask =
      marker?.task === undefined ? undefined : TaskHandleSchema.safeParse(marker.task).data;
    let taskCreated = recordedTask !== undefined;
    const annotations = session.tool(call.tool)?.annotations;
    const idempotent = call.idempotent && isIdempotent(config, call.tool, annotations);
    // The per-attempt timeout of this attempt, recorded on its outcome once the call was sent.
    let attemptTimeout: EffectiveTimeout | undefined;
    const outcome = (facts: Omit<OutcomeFacts, 'workerId' | 'pickedUpAt' | 'sentAt'>) =>
      buildOutcome(call, {
        ...facts,
        workerId,
        pickedUpAt: timing.pickedUpAt,
        ...(timing.sentAt ? { sentAt: timing.sentAt } : {}),
        ...(timing.sentAt && attemptTimeout ? { timeoutMs: attemptTimeout.timeoutMs } : {}),
      });

    // At most once: a non-idempotent call that was already sent by a worker that then vanished
    // (its lock expired and BullMQ handed the job to us) must not run again.
    if (!idempotent && marker && !recordedTask) {
      log.warn(
        { previousWorker: marker.dispatchedBy },
        'non-idempotent call re-delivered after its worker was lost',
      );
      return outcome({
        status: 'indeterminate',
        attempts: previousAttempts + 1,
        text: `The call to ${server}/${call.tool} was sent, but the worker running it was lost before it answered. It is not idempotent, so it was not run again; it may or may not have taken effect.`,
        error: `worker ${marker.dispatchedBy} lost mid-call`,
      });
    }
    if (previousAttempts === 0 && !marker && timing.pickedUpAt > call.deadline) {
      return outcome({
        status: 'expired',
        attempts: 0,
        text: `The call to ${server}/${call.tool} waited in the queue past its deadline and was not run.`,
        error: `picked up ${timing.pickedUpAt - call.deadline} ms after the deadline`,
      });
    }
    if (session.state !== 'ready' && session.state !== 'degraded') {
      return putBack(job, token, log, `session is ${session.state}`);
    }
    const tool = session.tool(call.tool);
    if (!tool) {
      return outcome({
        status: 'failed',
        executed: 'no',
        attempts: 0,
        text: `Server ${server} has no tool named "${call.tool}".`,
        error: 'unknown_tool',
      });
    }
    const check = validator.check(tool.inputSchema, call.arguments);
    if (!check.ok) {
      return outcome({
        status: 'invalid_arguments',
        attempts: 0,
        text: `Invalid arguments for ${server}__${call.tool}: ${check.errors.join('; ')}`,
        error: check.errors.join('; '),
      });
    }
    // A task-required tool sent as a plain call is refused by its server, some phrasing that as an
    // isError result ("it ran and failed"): when it cannot run as a task here, it is refused unsent.
    const plan = recordedTask
      ? 'task'
      : taskPlan(
          config.tasks.mode,
          tool.execution?.taskSupport,
          session.protocolVersion,
          session.extensionTasks !== undefined,
        );
    if (plan === 'refuse') {
      const why =
        config.tasks.mode === 'never'
          ? `tasks are disabled for ${server} (servers.${server}.tasks.mode: never)`
          : `${server} speaks ${session.protocolVersion ?? 'an unknown revision'} and offers no task mechanism this worker speaks (2025-11-25 tasks, or the io.modelcontextprotocol/tasks extension)`;
      return outcome({
        status: 'failed',
        executed: 'no',
        attempts: 0,
        text: `${server}/${call.tool} runs only as an MCP task (execution.taskSupport: required), and ${why}. The worker did not send it.`,
        error: 'task_required',
      });
    }
    if (recordedTask) {
      // The job's previous owner created the task and was lost: follow that task, never start another.
      timing.sentAt = marker?.dispatchedAt;
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

    const attempts = previousAttempts + 1;
    const lastAttempt = attempts >= (job.opts.attempts ?? 1);
    const timeout = await deps.timeouts.forAttempt(call.tool);
    attemptTimeout = timeout;
    // A stall can happen anywhere; it is caught at the two points where it matters: right before the
    // send (the fence) and before an outcome is recorded (the hold). Local time stands in for the lock's
    // age: the clock keeps running while a process is frozen.
    let lockSetAt: number | undefined = job.processedOn;
    const beforeSend = async () => {
      if (inFlight.controller.signal.aborted) throw inFlight.controller.signal.reason;
      const askedAt = Date.now();
      if (!idempotent || fence.mayHaveExpired(lockSetAt)) {
        const marker = idempotent
          ? undefined
          : ({ dispatchedBy: workerId, dispatchedAt: askedAt } satisfies DispatchMarker);
        const fenced = await fence.beforeSend(job, lockToken, marker);
        if (fenced === 'lock_lost') throw new CallAbort('lock_lost', 'the job lock is no longer ours');
        if (fenced === 'already_sent') throw new AlreadySentError();
        lockSetAt = askedAt;
      }
      // Nothing may wait between here and the request being written: this is the remaining window
      // (see the comment on settle's return below).
      timing.sentAt = Date.now();
      log.debug({ attempts, idempotent }, 'tool call sent');
    };
    // A stdio server with per-team secrets runs the call in the team's own session (child process).
    const onSession = <T>(use: (target: ManagedSession) => Promise<T>): Promise<T> =>
      deps.teamSessions ? deps.teamSessions.run(call.team, use) : use(session);
    const questions = new CallQuestions(call.answer);

    let result: Awaited<ReturnType<ManagedSession['callTool']>>;
    try {
      result = await inMcpCallSpan(server, config, call.tool, attempts, (span) => {
        const onTaskStatus: TaskRunDeps['onStatus'] = (task) => {
          span.addEvent('progress', {
            'mcp.task.status': task.status,
            ...(task.statusMessage ? { 'mcp.task.status_message': task.statusMessage } : {}),
          });
          log.info({ taskStatus: task.status, statusMessage: task.statusMessage }, 'task status');
        };
        // Every request of this call carries this team's credential (credentials/credential-fetch.ts).
        return callCredential
          .run(credential, () =>
            plan === 'task'
              ? runTask(onTaskStatus, beforeSend)
              : onSession((target) =>
                  target
                    .callTool(call.tool, call.arguments, {
                      timeoutMs: timeout.timeoutMs,
                      maxTotalTimeoutMs: config.maxTimeoutMs,
                      signal: inFlight.controller.signal,
                      beforeSend,
                      onQuestion: questions.handler,
                      // The MCP span's own context, so a server that traces parents its spans under this call.
                      meta: traceMeta(carrierFrom()),
                      // Asking for progress is what lets a long call's progress notifications extend its timeout.
                      onprogress: (progress) => {
                        span.addEvent('progress', {
                          progress: progress.progress,
                          ...(progress.total ? { total: progress.total } : {}),
                        });
                        log.debug({ progress }, 'tool call progress');
                        deps.relayProgress?.(job.id ?? '', call, progress);
                      },
                    })
                    .catch((error: unknown) => {
                      // Refused unrun for want of the tasks extension (2026-07-28, tasks.mode auto): sent
                      // again as a task, on the same session. The refusal proves it did not run, and the
                      // marker is already set.
                      if (!refusedForTasks(error, target, config)) throw error;
                      log.info(
                        { err: (error as Error).message },
                        'refused without tasks: sending it as a task',
                      );
                      return runTask(
                        onTaskStatus,
                        async () => {
                          if (inFlight.controller.signal.aborted) throw inFlight.controller.signal.reason;
                        },
                        target,
                      );
                    }),
                ),
          )
          .then(
            (answer) => {
              if (answer.isError) span.setAttribute(ATTR.ERROR_TYPE, 'tool_error');
              return answer;
            },
            (error: unknown) => {
              span.recordException(error as Error);
              span.setAttribute(ATTR.ERROR_TYPE, (error as Error).name);
              throw error;
            },
          );
      });
    } catch (error) {
      return failed(error);
    }
    const runMs = Date.now() - (timing.sentAt ?? 0);
    // Only answers that are results teach the adaptive timeout: a tool error may be a quick refusal.
    if (!result.isError) deps.timeouts.recordSuccess(call.tool, runMs);
    await holdOrLeave();
    log.info({ isError: result.isError === true, runMs, timeoutMs: timeout.timeoutMs }, 'tool call finished');
    return answered(result);

    /**
     * Starts the call as a task (recording its handle in the marker first) or follows the recorded one:
     * through the 2026-07-28 tasks extension when the session (or the recorded handle) has it, otherwise
     * with 2025-11-25's task methods.
     */
    function runTask(
      onStatus: TaskRunDeps['onStatus'],
      send: (() => Promise<void>) | undefined,
      on: ManagedSession = session,
    ) {
      const runDeps: TaskRunDeps = {
        tool: call.tool,
        config,
        session: on,
        signal: inFlight.controller.signal,
        log,
        onStatus,
      };
      const extension = recordedTask ? recordedTask.reference !== undefined : on.extensionTasks !== undefined;
      const runner = extension ? new ExtensionTaskRunner(runDeps) : new TaskRunner(runDeps);
      if (recordedTask) return runner.follow(recordedTask);
      return runner.start(call.arguments, traceMeta(carrierFrom()), send, async (task) => {
        taskCreated = true;
        const marker = { dispatchedBy: workerId, dispatchedAt: timing.sentAt ?? Date.now(), task };
        if (!(await fence.recordTask(job, lockToken, marker))) {
          throw new CallAbort('lock_lost', 'the job lock was lost before the task handle was recorded');
        }
      });
    }

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
      if (idempotent && !fence.mayHaveExpired(lockSetAt)) return;
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
      return outcome({
        status: 'failed',
        executed: 'no',
        attempts: counted,
        text: `${capitalized(error.message)}; the call to ${server}/${call.tool} was not run.`,
        error: `credential_${error.problem}`,
      });
    }

    function answered(answer: CallToolResult): StoredToolCallOutcome {
      if (questions.unanswered) return askedPerson(answer, questions.unanswered);
      // The server answered, so the call ran: a result we cannot store is a protocol error, never retried.
      if (
        jsonDepthExceeds(answer.structuredContent, MAX_RESULT_DEPTH) ||
        jsonDepthExceeds(answer.content, MAX_RESULT_DEPTH)
      ) {
        return outcome({
          status: 'failed',
          executed: 'yes',
          attempts,
          text: `${server}/${call.tool} answered with a result nested deeper than ${MAX_RESULT_DEPTH} levels; it ran, but its result was discarded.`,
          error: 'result_too_deep',
        });
      }
      // The server's bytes: text no store or model should choke on (NUL, lone surrogates) is replaced.
      const capped = capResult(
        {
          content: safeJson(answer.content),
          structuredContent: safeJson(structuredObject(answer.structuredContent)),
        },
        config.maxResultBytes,
      );
      return outcome({
        status: answer.isError ? 'tool_error' : 'ok',
        attempts,
        content: capped.content,
        ...(capped.structuredContent ? { structuredContent: capped.structuredContent } : {}),
        truncated: capped.truncated,
      });
    }

    /**
     * The server asked a question nobody could answer yet (it got `cancel`): the call ends
     * `input_required` with the question. The tool ran up to its question (executed `yes`), so what it
     * did before asking happens again when the answered call is retried (docs/semantics.md §14).
     */
    function askedPerson(answer: CallToolResult, question: Question): StoredToolCallOutcome {
      const reply = cutToEncodedBytes(JSON.stringify(safeJson(answer.content ?? [])), OUTCOME_DETAIL_BYTES);
      log.info({ mode: question.mode }, 'the server asked a person; the call ends input_required');
      return outcome({
        status: 'input_required',
        executed: 'yes',
        attempts,
        text: `${server}/${call.tool} asks: ${question.message}`,
        question,
        error: `server reply to the cancelled question: ${reply}`,
      });
    }

    async function failed(error: unknown): Promise<StoredToolCallOutcome> {
      const abort = error instanceof CallAbort ? error : inFlight.controller.signal.reason;
      if (abort instanceof CallAbort && abort.kind === 'lock_lost') {
        if (timing.sentAt === undefined) {
          log.warn({ attempts }, 'lock lost before the send: call not sent, no outcome recorded');
          throw new LockLostError('lock lost before the send');
        }
        leave('lock lost while the call ran');
      }
      if (error instanceof TaskLostError) {
        log.warn({ attempts, err: error.message }, 'the recorded task is gone from the server');
        return outcome({
          status: 'indeterminate',
          attempts,
          text: `The call to ${server}/${call.tool} ran as a task that the server no longer knows; it may or may not have finished, and it was not run again.`,
          error: error.message,
        });
      }
      if (error instanceof AlreadySentError) {
        log.warn({ attempts }, 'a marker appeared before the send: the call was sent by another worker');
        return outcome({
          status: 'indeterminate',
          attempts,
          text: `The call to ${server}/${call.tool} had already been sent by another worker, which was lost before it answered. It is not idempotent, so it was not run again; it may or may not have taken effect.`,
          error: 'already dispatched',
        });
      }
      if (timing.sentAt === undefined && abort instanceof CallAbort) {
        return outcome({
          status: 'cancelled',
          executed: 'no',
          attempts: previousAttempts,
          text: `The call to ${server}/${call.tool} was cancelled before it was sent.`,
          error: abort.message,
        });
      }
      if (error instanceof CredentialError) {
        // A 401 is the server refusing before it ran anything, even after one renewed credential; a team
        // session that did not start never got the call.
        await holdOrLeave();
        return credentialRefused(error, timing.sentAt === undefined ? previousAttempts : attempts);
      }
      const failure = classifyCallError(error, abort instanceof CallAbort);
      const detail = cutToEncodedBytes(failure.message, OUTCOME_DETAIL_BYTES);
      log.warn({ failure: failure.kind, err: detail, attempts, idempotent, lastAttempt }, 'tool call failed');
      if (failure.kind === 'not_sent') {
        // Nothing reached the server, so even a non-idempotent call may go back on the queue.
        if (!idempotent && timing.sentAt !== undefined && !(await fence.unmark(job, lockToken))) {
          leave('lock lost before the call could go back on the queue');
        }
        return putBack(job, token, log, detail);
      }
      await holdOrLeave();
      const retryable =
        failure.kind === 'timeout' || failure.kind === 'transport' || failure.kind === 'connection_lost';
      // A created task is followed, never re-created: its handle is in the job, not a new attempt.
      if (idempotent && retryable && !lastAttempt && !taskCreated) {
        throw new RetryableCallError(`${server}/${call.tool} attempt ${attempts}: ${detail}`);
      }
      if (failure.kind === 'connection_lost' && !idempotent) {
        // The revision's rule (docs/semantics.md §11): a lost request is gone, never re-issued.
        return outcome({
          status: 'indeterminate',
          attempts,
          text: `The call to ${server}/${call.tool} was sent, but the connection to the server was lost before it answered. It is not idempotent, so it was not sent again; it may or may not have taken effect.`,
          error: detail,
        });
      }
      switch (failure.kind) {
        case 'timeout':
          return outcome({
            status: 'timeout',
            attempts,
            ...(error instanceof TaskTimeoutError
              ? {
                  text: `The task ${server}/${call.tool} did not finish within ${error.limitMs} ms (tasks.maxDurationMs) and was cancelled; it may or may not have taken effect.`,
                  error: detail,
                }
              : firedLimit(server, call.tool, error, timeout, config)),
          });
        case 'cancelled': {
          // The cancel's own reason names what ended the call: an explicit cancel or the job's deadline.
          const reason = abort instanceof CallAbort ? abort.message : detail;
          return outcome({
            status: 'cancelled',
            executed: 'unknown',
            attempts,
            text: `The call to ${server}/${call.tool} was cancelled while it ran (${reason}); it may or may not have taken effect.`,
            error: reason,
          });
        }
        case 'invalid_params':
          return outcome({
            status: 'invalid_arguments',
            executed: 'no',
            attempts,
            text: `Server ${server} rejected the arguments of ${call.tool}: ${detail}`,
            error: detail,
          });
        case 'refused':
          return outcome({
            status: 'failed',
            executed: 'no',
            attempts,
            text: `Server ${server} refused the call to ${call.tool} before running it: ${detail}`,
            error: detail,
          });
        case 'unknown_tool':
          return outcome({
            status: 'failed',
            executed: 'no',
            attempts,
            text: `Server ${server} does not know the tool "${call.tool}".`,
            error: detail,
          });
        default:
          return outcome({
            status: 'failed',
            executed: 'unknown',
            attempts,
            text: `The call to ${server}/${call.tool} failed: ${detail}`,
            error: detail,
          });
      }
    }
  }

  return processToolCall;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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

function traceMeta(carrier: TraceCarrier): Record<string, string> | undefined {
  const { traceparent, tracestate, baggage } = carrier;
  if (!traceparent) return undefined;
  return { traceparent, ...(tracestate ? { tracestate } : {}), ...(baggage ? { baggage } : {}) };
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
  timing: CallTiming,
): StoredToolCallOutcome {
  const data = (job.data ?? {}) as Partial<ToolCallJob>;
  return buildOutcome(
    {
      jobId: String(data.jobId ?? job.id),
      toolCallId: String(data.toolCallId ?? job.id),
      server,
      tool: String(data.tool ?? 'unknown'),
      // Unreadable as it is, the job's own enqueue time cannot be trusted: no queue wait is claimed.
      enqueuedAt: timing.pickedUpAt,
    },
    {
      status: 'failed',
      executed: 'no',
      workerId,
      pickedUpAt: timing.pickedUpAt,
      text: 'The tool call job was malformed and was not run.',
      error: cutToEncodedBytes(`malformed job data: ${reason}`, OUTCOME_DETAIL_BYTES),
    },
    timing.pickedUpAt,
  );
}
