import {
  type CallToolResult,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type StandardSchemaV1,
  specTypeSchemas,
  type Task,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from '@switchyard/contracts';
import { z } from 'zod';
import type { Logger } from '../runtime/logger.ts';
import type { CallOptions, ManagedSession } from '../sessions/managed-session.ts';
import { CallAbort } from './in-flight-calls.ts';
import { AttachedTaskLink, type TaskLink } from './task-link.ts';

/**
 * What the worker records in the job (inside the at-most-once marker) once the server created the
 * task, before the first poll: enough for any worker to follow the same task (docs/semantics.md §12).
 */
export const TaskHandleSchema = z.object({
  taskId: z.string().min(1),
  /** The Streamable HTTP session the task was created on (servers may keep tasks per session). */
  httpSessionId: z.string().optional(),
  /** The server's suggested poll interval. */
  pollIntervalMs: z.number().optional(),
  /** The revision of the session it was created on (the `mcp-protocol-version` header when re-attaching). */
  protocolVersion: z.string().optional(),
  /** When the task was created (local time of the creating worker): `tasks.maxDurationMs` counts from it. */
  createdAt: z.number(),
  /**
   * 2026-07-28 tasks extension: ext-tasks' serialized task reference (endpoint, generation, task id,
   * operation), what `resumeTask` takes on any worker (extension-task-runner.ts).
   */
  reference: z
    .object({
      endpointId: z.string().min(1),
      generation: z.enum(['v1', 'v2']),
      taskId: z.string().min(1),
      originalOperation: z.string().min(1),
    })
    .optional(),
});
export type TaskHandle = z.infer<typeof TaskHandleSchema>;

/**
 * Whether a call runs as a task, a plain call, or is refused before sending: `tasks.mode` × the tool's
 * taskSupport × whether the session has a task mechanism this worker speaks — 2025-11-25's own, or on
 * 2026-07-28 the extension `io.modelcontextprotocol/tasks` when the server offers it (`extensionTasks`).
 * 2026-07-28 tools declare no taskSupport: the server answers a call with a task when it wants one, and
 * refuses a call that did not declare the extension (-32021) when it needs one. So there, `prefer`
 * declares it on every call, and `auto` sends a plain call and repeats a refused one as a task.
 */
export function taskPlan(
  mode: ServerConfig['tasks']['mode'],
  taskSupport: string | undefined,
  protocolVersion: string | undefined,
  extensionTasks = false,
): 'task' | 'call' | 'refuse' {
  if (extensionTasks) return mode === 'prefer' ? 'task' : 'call';
  const canTask = mode !== 'never' && protocolVersion === '2025-11-25';
  if (taskSupport === 'required') return canTask ? 'task' : 'refuse';
  if (taskSupport === 'optional' && mode === 'prefer' && canTask) return 'task';
  return 'call';
}

/** The task is gone from the server (expired, or it lived in a server process that died with its worker). */
export class TaskLostError extends Error {
  override name = 'TaskLostError';
}

/** The task ran past `tasks.maxDurationMs`; it was cancelled with `tasks/cancel`. */
export class TaskTimeoutError extends SdkError {
  constructor(readonly limitMs: number) {
    super(
      SdkErrorCode.RequestTimeout,
      `the task ran past tasks.maxDurationMs (${limitMs} ms) and was cancelled`,
    );
    this.name = 'TaskTimeoutError';
  }
}

/** Validates a result against an MCP spec schema; a mismatch is the SDK's own "invalid result" error. */
function parseResult<T>(schema: StandardSchemaV1<unknown, T>, value: unknown, what: string): T {
  const checked = schema['~standard'].validate(value);
  if (checked instanceof Promise) throw new Error(`${what}: asynchronous schema`);
  if (checked.issues) {
    const issue = checked.issues[0];
    throw new SdkError(
      SdkErrorCode.InvalidResult,
      `${what}: ${issue?.path?.join('.') ?? ''} ${issue?.message ?? ''}`,
    );
  }
  return checked.value;
}

const AnyResultSchema = z.looseObject({});

/** Poll no faster or slower than this, whatever the server suggests. */
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5_000;
/** A poll that fails for a transport reason is retried after this; the task keeps running meanwhile. */
const POLL_RETRY_MS = 500;

export interface TaskRunDeps {
  tool: string;
  config: ServerConfig;
  session: ManagedSession;
  signal: AbortSignal;
  log: Logger;
  /** Each new status (and status message) of the task: fed to the call's progress events. */
  onStatus: (task: Pick<Task, 'status' | 'statusMessage'>) => void;
}

/**
 * Runs one tools/call as an MCP task (2025-11-25: task-augmented `tools/call` → CreateTaskResult, then
 * `tasks/get` until terminal, then `tasks/result`), and follows a recorded task after a hand-over.
 * An explicit cancel (or the job's deadline, which the orchestrator turns into a cancel) becomes
 * `tasks/cancel`; a lost lock does not: the task keeps running for the job's next owner.
 */
export class TaskRunner {
  private attached: { sessionId: string; link: AttachedTaskLink } | undefined;

  constructor(private readonly deps: TaskRunDeps) {}

  /** Creates the task; `record` must durably store the handle before this returns to polling. */
  async start(
    args: Record<string, unknown>,
    meta: Record<string, string> | undefined,
    beforeSend: CallOptions['beforeSend'],
    record: (handle: TaskHandle) => Promise<void>,
  ): Promise<CallToolResult> {
    const { config, session, tool } = this.deps;
    const answer = await session.send(
      {
        method: 'tools/call',
        params: {
          name: tool,
          arguments: args,
          // The server keeps the task (and its result) at least this long: long enough to be resumed.
          task: { ttl: config.tasks.maxDurationMs + config.timeoutMs },
          ...(meta ? { _meta: meta } : {}),
        },
      },
      // Parsed below: a server may answer a task-augmented call with the plain result.
      AnyResultSchema,
      // Not aborted by a cancel: a task created meanwhile would be one nobody can cancel. Creating
      // is quick; a cancel that arrives during it is turned into tasks/cancel right after.
      { timeoutMs: config.timeoutMs, ...(beforeSend ? { beforeSend } : {}) },
    );
    if (!('task' in answer)) {
      // It ran the call in place of a task: this is its answer (malformed ones fail as usual, as protocol errors).
      return parseResult(specTypeSchemas.CallToolResult, answer, 'tools/call result');
    }
    const created = parseResult(specTypeSchemas.CreateTaskResult, answer, 'CreateTaskResult');
    const sessionId = session.httpSessionId;
    const protocolVersion = session.protocolVersion;
    const handle: TaskHandle = {
      taskId: created.task.taskId,
      ...(sessionId ? { httpSessionId: sessionId } : {}),
      ...(protocolVersion ? { protocolVersion } : {}),
      ...(created.task.pollInterval ? { pollIntervalMs: created.task.pollInterval } : {}),
      createdAt: Date.now(),
    };
    await record(handle);
    this.deps.log.info({ task_id: handle.taskId, status: created.task.status }, 'task created');
    return this.follow(handle);
  }

  /** Polls the task until it ends, then fetches its result. */
  async follow(handle: TaskHandle): Promise<CallToolResult> {
    const { config, signal, log } = this.deps;
    const deadline = handle.createdAt + config.tasks.maxDurationMs;
    let seen = '';
    try {
      for (;;) {
        if (signal.aborted) return await this.aborted(handle);
        if (Date.now() >= deadline) {
          await this.cancel(handle, 'tasks.maxDurationMs reached');
          throw new TaskTimeoutError(config.tasks.maxDurationMs);
        }
        const task = await this.poll(handle);
        if (task) {
          const status = `${task.status}|${task.statusMessage ?? ''}`;
          if (status !== seen) {
            seen = status;
            this.deps.onStatus(task);
          }
          if (task.status === 'completed' || task.status === 'failed') return await this.result(handle);
          if (task.status === 'cancelled') {
            throw new ProtocolError(
              ProtocolErrorCode.InternalError,
              `the server cancelled task ${handle.taskId}${task.statusMessage ? `: ${task.statusMessage}` : ''}`,
            );
          }
        }
        const every = task?.pollInterval ?? handle.pollIntervalMs ?? 1_000;
        await pause(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, every), deadline - Date.now()), signal);
      }
    } catch (error) {
      // aborted() rethrows the abort's reason after its tasks/cancel: not a second cancel.
      if (signal.aborted && error !== signal.reason && !(error instanceof TaskTimeoutError)) {
        return await this.aborted(handle);
      }
      log.debug({ task_id: handle.taskId, err: error }, 'following the task ended with an error');
      throw error;
    } finally {
      await this.attached?.link.close();
      this.attached = undefined;
    }
  }

  /** One `tasks/get`; undefined when it failed for a passing reason (the next poll tries again). */
  private async poll(handle: TaskHandle): Promise<Task | undefined> {
    const { config, signal, log } = this.deps;
    try {
      return await (await this.link(handle)).send(
        { method: 'tasks/get', params: { taskId: handle.taskId } },
        specTypeSchemas.GetTaskResult,
        { timeoutMs: config.timeoutMs, signal },
      );
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof ProtocolError && error.code === ProtocolErrorCode.InvalidParams) {
        throw new TaskLostError(`task ${handle.taskId} is unknown to the server: ${error.message}`);
      }
      // A timed-out poll, a dropped connection, a session that is reconnecting: the task runs on.
      log.warn({ task_id: handle.taskId, err: error }, 'task poll failed; polling again');
      await this.attached?.link.close();
      this.attached = undefined;
      await pause(POLL_RETRY_MS, signal);
      return undefined;
    }
  }

  private async result(handle: TaskHandle): Promise<CallToolResult> {
    const { config, signal } = this.deps;
    return (await this.link(handle)).send(
      { method: 'tasks/result', params: { taskId: handle.taskId } },
      specTypeSchemas.CallToolResult,
      { timeoutMs: config.timeoutMs, signal },
    );
  }

  /**
   * A cancel (or the deadline) becomes `tasks/cancel`, then the abort is rethrown so the call ends
   * `cancelled` as any running call does. A lost lock is a hand-over: the task is left running.
   */
  private async aborted(handle: TaskHandle): Promise<never> {
    const reason = this.deps.signal.reason;
    if (reason instanceof CallAbort && reason.kind === 'cancelled') await this.cancel(handle, reason.message);
    throw reason;
  }

  private async cancel(handle: TaskHandle, why: string): Promise<void> {
    const { config, log } = this.deps;
    try {
      // No signal: the call's own signal is what fired, and this request must still go out.
      await (await this.link(handle)).send(
        { method: 'tasks/cancel', params: { taskId: handle.taskId } },
        specTypeSchemas.CancelTaskResult,
        { timeoutMs: config.timeoutMs },
      );
      log.info({ task_id: handle.taskId, why }, 'task cancelled');
    } catch (error) {
      log.warn({ task_id: handle.taskId, why, err: error }, 'tasks/cancel failed');
    }
  }

  /** The worker's session when the task lives there; otherwise the recorded HTTP session (see task-link.ts). */
  private async link(handle: TaskHandle): Promise<TaskLink> {
    const { session, config } = this.deps;
    const wanted = handle.httpSessionId;
    if (!wanted || wanted === session.httpSessionId) return session;
    if (this.attached?.sessionId !== wanted) {
      await this.attached?.link.close();
      this.attached = {
        sessionId: wanted,
        link: await AttachedTaskLink.open(config, wanted, handle.protocolVersion),
      };
    }
    return this.attached.link;
  }
}

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
  });
}
