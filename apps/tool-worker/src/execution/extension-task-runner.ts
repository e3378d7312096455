import { type CallToolResult, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import {
  DispatchError,
  JsonRpcResponseError,
  type SerializedTaskReference,
  type TaskEnabledSession,
  type TaskOutcome,
  type ToolExecution,
} from '@modelcontextprotocol/ext-tasks/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import { SessionNotReadyError } from '../sessions/managed-session.ts';
import { startingCall } from '../sessions/task-session.ts';
import { CallAbort } from './in-flight-calls.ts';
import { pause, type TaskHandle, TaskLostError, type TaskRunDeps, TaskTimeoutError } from './task-runner.ts';

/** A poll that failed for a passing reason (a reconnect, a timeout) is tried again after this. */
const RETRY_MS = 500;

type Result = CallToolResult;

/**
 * Runs one tools/call through the 2026-07-28 tasks extension `io.modelcontextprotocol/tasks` with
 * `@modelcontextprotocol/ext-tasks`: the call declares the extension, the server answers either at
 * once or with a task; a task's reference is recorded (`record`, the fenced step) through the
 * library's own hand-over (`handoff`) before it is followed, and followed with `resumeTask` — by this
 * worker right away, or by the job's next owner. Polling, `tasks/get` and `tasks/cancel` are the
 * library's. Cancel and the job's deadline become `tasks/cancel`; a lost lock detaches (the task runs on).
 */
export class ExtensionTaskRunner {
  constructor(private readonly deps: TaskRunDeps) {}

  async start(
    args: Record<string, unknown>,
    meta: Record<string, string> | undefined,
    beforeSend: (() => Promise<void>) | undefined,
    record: (handle: TaskHandle) => Promise<void>,
  ): Promise<Result> {
    const { config, tool, log } = this.deps;
    const tasks = this.tasks();
    let execution: ToolExecution<Result>;
    try {
      execution = await startingCall(beforeSend, () =>
        tasks.callTool<Result>(tool, args as Record<string, JsonValue>, {
          // The server decides: a task, or the result at once.
          task: { preference: 'allow' },
          ...(meta ? { metadata: meta } : {}),
          requestTimeoutMs: config.timeoutMs,
        }),
      );
    } catch (error) {
      throw asProtocolError(error);
    }
    if (execution.kind === 'immediate') return resultOf((await execution.settle()).outcome, 'the call');
    let handle: TaskHandle | undefined;
    try {
      await execution.handoff(async (reference) => {
        handle = {
          taskId: reference.taskId,
          reference,
          ...(this.deps.session.protocolVersion
            ? { protocolVersion: this.deps.session.protocolVersion }
            : {}),
          createdAt: Date.now(),
        };
        await record(handle);
      });
    } catch (error) {
      // Not recorded: nobody will follow this task, but it is not cancelled either (the job's next
      // owner reports the call `indeterminate`, §12).
      await execution.detach();
      throw error;
    }
    if (!handle) throw new Error('ext-tasks handed over no task reference');
    // The session lets one execution own a task at a time: it releases the handed-over one once that
    // settles (closed), and only then does resumeTask below accept the reference.
    await execution.result().catch(() => undefined);
    log.info({ task_id: handle.taskId }, 'task created');
    return this.follow(handle);
  }

  /** Follows a recorded task to its end; a poll that fails for a passing reason is retried. */
  async follow(handle: TaskHandle): Promise<Result> {
    const { config, signal, log } = this.deps;
    const reference = handle.reference as SerializedTaskReference | undefined;
    if (!reference) throw new TaskLostError(`task ${handle.taskId} has no extension reference`);
    const deadline = handle.createdAt + config.tasks.maxDurationMs;
    for (;;) {
      if (signal.aborted) return this.aborted(reference);
      if (Date.now() >= deadline) {
        await this.cancel(reference, 'tasks.maxDurationMs reached');
        throw new TaskTimeoutError(config.tasks.maxDurationMs);
      }
      try {
        return await this.once(reference, deadline);
      } catch (error) {
        if (!(error instanceof DispatchError) || signal.aborted) throw error;
        log.warn({ task_id: reference.taskId, err: error }, 'task poll failed; polling again');
        await pause(RETRY_MS, signal);
      }
    }
  }

  /** One resumed execution, settled: the task's result, or its end. */
  private async once(reference: SerializedTaskReference, deadline: number): Promise<Result> {
    const { config, signal } = this.deps;
    let execution: ToolExecution<Result>;
    try {
      execution = await this.tasks().resumeTask<Result>(reference, { requestTimeoutMs: config.timeoutMs });
    } catch (error) {
      if (error instanceof JsonRpcResponseError && error.code === ProtocolErrorCode.InvalidParams) {
        throw new TaskLostError(`task ${reference.taskId} is unknown to the server: ${error.message}`);
      }
      throw error;
    }
    let timedOut = false;
    const stop = () => {
      const reason = signal.reason;
      // An explicit cancel (or the job's deadline) is tasks/cancel; a lost lock is a hand-over.
      if (reason instanceof CallAbort && reason.kind === 'cancelled')
        void this.cancelExecution(execution, reason.message);
      else void execution.detach();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      void this.cancelExecution(execution, 'tasks.maxDurationMs reached');
    }, deadline - Date.now());
    signal.addEventListener('abort', stop, { once: true });
    // An abort while resumeTask looked the task up has already fired.
    if (signal.aborted) stop();
    try {
      const { outcome } = await execution.settle({
        onEvent: (event) => {
          if (event.type === 'task') {
            this.deps.onStatus({
              status: event.task.status as never,
              ...(event.task.statusMessage ? { statusMessage: event.task.statusMessage } : {}),
            });
          }
        },
      });
      if (timedOut) throw new TaskTimeoutError(config.tasks.maxDurationMs);
      if (signal.aborted) throw signal.reason;
      return resultOf(outcome, `task ${reference.taskId}`);
    } catch (error) {
      if (timedOut) throw new TaskTimeoutError(config.tasks.maxDurationMs);
      if (signal.aborted) throw signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
  }

  private async aborted(reference: SerializedTaskReference): Promise<never> {
    const reason = this.deps.signal.reason;
    if (reason instanceof CallAbort && reason.kind === 'cancelled')
      await this.cancel(reference, reason.message);
    throw reason;
  }

  /** `tasks/cancel` for a task no execution of ours is following. */
  private async cancel(reference: SerializedTaskReference, why: string): Promise<void> {
    try {
      await this.tasks().task(reference.taskId, { requestTimeoutMs: this.deps.config.timeoutMs }).cancel();
      this.deps.log.info({ task_id: reference.taskId, why }, 'task cancelled');
    } catch (error) {
      this.deps.log.warn({ task_id: reference.taskId, why, err: error }, 'tasks/cancel failed');
    }
  }

  private async cancelExecution(execution: ToolExecution<Result>, why: string): Promise<void> {
    const taskId = execution.handle?.taskId;
    try {
      await execution.cancel();
      this.deps.log.info({ task_id: taskId, why }, 'task cancelled');
    } catch (error) {
      this.deps.log.warn({ task_id: taskId, why, err: error }, 'tasks/cancel failed');
    }
  }

  private tasks(): TaskEnabledSession {
    const { session } = this.deps;
    const tasks = session.extensionTasks;
    if (!tasks) throw new SessionNotReadyError(session.server, session.state);
    return tasks;
  }
}

/** The call's answer, or the task's end as the error the call failed with. */
function resultOf(outcome: TaskOutcome<Result>, what: string): Result {
  switch (outcome.status) {
    case 'completed':
      return outcome.result;
    case 'failed':
      throw new ProtocolError(
        outcome.error.code ?? ProtocolErrorCode.InternalError,
        `${what} failed: ${outcome.error.message}`,
      );
    case 'cancelled':
      throw new ProtocolError(ProtocolErrorCode.InternalError, `the server cancelled ${what}`);
  }
}

/** A JSON-RPC error answer keeps its code, so a refusal is classified as one (call-errors.ts). */
function asProtocolError(error: unknown): unknown {
  if (error instanceof JsonRpcResponseError) return new ProtocolError(error.code, error.message, error.data);
  return error;
}
