import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Span } from '@opentelemetry/api';
import {
  carrierFrom,
  progressThrottle,
  RELAYED_PROGRESS_INTERVAL_MS,
  type ToolCallJob,
  type TraceCarrier,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { callCredential } from '../credentials/credential-fetch.ts';
import type { CredentialSource } from '../credentials/credential-source.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { callLogs } from './call-logs.ts';
import type { CallPolicy } from './call-policy.ts';
import type { CallQuestions } from './call-questions.ts';
import { type AttemptMcpSpan, describeSession, inMcpCallSpan } from './call-spans.ts';
import { ExtensionTaskRunner } from './extension-task-runner.ts';
import { CallAbort } from './in-flight-calls.ts';
import type { Unreplicated } from './job-fence.ts';
import type { DispatchMarker } from './pre-send-checks.ts';
import type { ServerProgress } from './progress-relay.ts';
import { refusedForTasks } from './refused-for-tasks.ts';
import { type TaskHandle, type TaskRunDeps, TaskRunner } from './task-runner.ts';
import type { ProcessorDeps } from './tool-call-processor.ts';

/** The fenced marker found another worker's marker: the call was sent by someone else. */
export class AlreadySentError extends Error {
  override name = 'AlreadySentError';
}

/**
 * Fewer replicas than required confirmed the marker in time (job-fence.ts): the call was not sent, and
 * its marker was taken back.
 */
export class UnreplicatedMarkerError extends Error {
  override name = 'UnreplicatedMarkerError';
  constructor(readonly detail: Unreplicated['unreplicated']) {
    super(
      `${detail.acked} of ${detail.required} Redis replica(s) confirmed the at-most-once marker within ${detail.timeoutMs} ms`,
    );
  }
}

/** What the send learns as it goes, which the processor reads afterwards (holding the job, the outcome). */
export interface AttemptState {
  /** When the request was written (after the fence), on Redis's clock; undefined: never sent. */
  sentAt?: number;
  /** The same moment on this process's monotonic clock, for runMs: a duration measured on one machine. */
  sentMonoMs?: number;
  /** A local time at or before the job's lock was last set (fence.mayHaveExpired). */
  lockSetAt: number | undefined;
  /** The server created a task for this call (or the job's previous owner did). */
  taskCreated: boolean;
}

export interface SendContext {
  deps: ProcessorDeps;
  job: Job;
  call: ToolCallJob;
  lockToken: string;
  signal: AbortSignal;
  log: Logger;
  idempotent: boolean;
  attempts: number;
  plan: 'task' | 'call';
  recordedTask: TaskHandle | undefined;
  credential: CredentialSource | undefined;
  policy: CallPolicy;
  questions: CallQuestions;
  state: AttemptState;
  /** Where the attempt's MCP span goes, to be settled with the delivery's outcome. */
  mcpSpan: AttemptMcpSpan;
}

/**
 * Sends one attempt of a call (a plain tools/call or a task) and returns the server's answer; throws
 * whatever ended it. The fence runs right before the request is written (beforeSend).
 *
 * The window that remains: a stall between the fenced marker and the request being written. If this
 * worker freezes exactly there past its lock, the next owner finds the marker and reports
 * `indeterminate` (executed unknown) without sending; the frozen worker then sends once when it wakes,
 * and cannot record anything (its lock is gone). So the call runs at most once and the outcome stays
 * truthful: "may or may not have run" covers the late send.
 */
export function sendCall(context: SendContext): Promise<CallToolResult> {
  const { deps, job, call, lockToken, signal, log, idempotent, attempts, state } = context;
  const { server, config, session, workerId, fence } = deps;

  // A stall can happen anywhere; it is caught at the two points where it matters: right before the
  // send (the fence) and before an outcome is recorded (the hold). Local time stands in for the lock's
  // age: the clock keeps running while a process is frozen.
  const beforeSend = async () => {
    if (signal.aborted) throw signal.reason;
    const askedAt = Date.now();
    if (!idempotent || fence.mayHaveExpired(state.lockSetAt)) {
      const marker = idempotent
        ? undefined
        : ({ dispatchedBy: workerId, dispatchedAt: deps.clock.now() } satisfies DispatchMarker);
      const fenced = await fence.beforeSend(job, lockToken, marker);
      if (fenced === 'lock_lost') throw new CallAbort('lock_lost', 'the job lock is no longer ours');
      if (fenced === 'already_sent') throw new AlreadySentError();
      if (typeof fenced === 'object') throw new UnreplicatedMarkerError(fenced.unreplicated);
      state.lockSetAt = askedAt;
    }
    // Nothing may wait between here and the request being written: this is the remaining window.
    state.sentAt = deps.clock.now();
    state.sentMonoMs = performance.now();
    log.debug({ attempts, idempotent }, 'tool call sent');
  };
  // A stdio server with per-team secrets runs the call in the team's own session (child process).
  const onSession = <T>(use: (target: ManagedSession) => Promise<T>): Promise<T> =>
    deps.teamSessions ? deps.teamSessions.run(call.team, use) : use(session);
  // The MCP span names the session the request goes over (the team's own one, or the shared one).
  let mcpSpan: Span | undefined;
  const over = (target: ManagedSession): ManagedSession => {
    if (mcpSpan) describeSession(mcpSpan, target);
    return target;
  };

  /**
   * Starts the call as a task (recording its handle in the marker first) or follows the recorded one:
   * through the 2026-07-28 tasks extension when the session (or the recorded handle) has it, otherwise
   * with 2025-11-25's task methods.
   */
  const runTask = (
    onStatus: TaskRunDeps['onStatus'],
    send: (() => Promise<void>) | undefined,
    on: ManagedSession = session,
  ) => {
    const runDeps: TaskRunDeps = { tool: call.tool, config, session: over(on), signal, log, onStatus };
    const { recordedTask } = context;
    const extension = recordedTask ? recordedTask.reference !== undefined : on.extensionTasks !== undefined;
    const runner = extension ? new ExtensionTaskRunner(runDeps) : new TaskRunner(runDeps);
    if (recordedTask) return runner.follow(recordedTask);
    return runner.start(call.arguments, traceMeta(carrierFrom()), send, async (task) => {
      state.taskCreated = true;
      const marker = { dispatchedBy: workerId, dispatchedAt: state.sentAt ?? deps.clock.now(), task };
      if (!(await fence.recordTask(job, lockToken, marker))) {
        throw new CallAbort('lock_lost', 'the job lock was lost before the task handle was recorded');
      }
    });
  };

  // The server's progress, relayed at most once per interval (the newest wins; the last is not lost).
  const relay = deps.relayProgress;
  const relayedProgress = relay
    ? progressThrottle<ServerProgress>(async (progress) => {
        relay(job.id ?? '', call, progress);
      }, RELAYED_PROGRESS_INTERVAL_MS)
    : undefined;
  // The server's log messages, only when the caller asked for them (a /mcp client's level).
  const logs =
    deps.relayLog && call.logLevel ? callLogs(deps.relayLog, job.id ?? '', call, call.logLevel) : undefined;

  return inMcpCallSpan(server, config, call.tool, attempts, context.mcpSpan, (span) => {
    mcpSpan = span;
    const onTaskStatus: TaskRunDeps['onStatus'] = (task) => {
      span.addEvent('progress', {
        'mcp.task.status': task.status,
        ...(task.statusMessage ? { 'mcp.task.status_message': task.statusMessage } : {}),
      });
      log.info({ taskStatus: task.status, statusMessage: task.statusMessage }, 'task status');
    };
    // Every request of this call carries this team's credential (credentials/credential-fetch.ts).
    return callCredential
      .run(context.credential, () =>
        context.plan === 'task'
          ? runTask(onTaskStatus, beforeSend)
          : onSession((target) =>
              over(target)
                .callTool(call.tool, call.arguments, {
                  timeoutMs: context.policy.timeout.timeoutMs,
                  maxTotalTimeoutMs: context.policy.maxTotalTimeoutMs,
                  signal,
                  beforeSend,
                  onQuestion: context.questions.handler,
                  ...(logs ? { onLog: logs.onLog, logLevel: call.logLevel } : {}),
                  // The MCP span's own context, so a server that traces parents its spans under this call.
                  meta: traceMeta(carrierFrom()),
                  // Asking for progress is what lets a long call's progress notifications extend its timeout.
                  onprogress: (progress) => {
                    span.addEvent('progress', {
                      progress: progress.progress,
                      ...(progress.total ? { total: progress.total } : {}),
                    });
                    log.debug({ progress }, 'tool call progress');
                    relayedProgress?.push(progress);
                  },
                })
                .catch((error: unknown) => {
                  // Refused unrun for want of the tasks extension (2026-07-28, tasks.mode auto): sent
                  // again as a task, on the same session. The refusal proves it did not run, and the
                  // marker is already set.
                  if (!refusedForTasks(error, target, config)) throw error;
                  log.info({ err: (error as Error).message }, 'refused without tasks: sending it as a task');
                  return runTask(
                    onTaskStatus,
                    async () => {
                      if (signal.aborted) throw signal.reason;
                    },
                    target,
                  );
                }),
            ),
      )
      .finally(() => Promise.all([relayedProgress?.close(), logs?.close()]));
  });
}

function traceMeta(carrier: TraceCarrier): Record<string, string> | undefined {
  const { traceparent, tracestate, baggage } = carrier;
  if (!traceparent) return undefined;
  return { traceparent, ...(tracestate ? { tracestate } : {}), ...(baggage ? { baggage } : {}) };
}
