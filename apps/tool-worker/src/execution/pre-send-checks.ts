import type { ArgumentValidator, CatalogTool, ServerConfig, ToolCallJob } from '@switchyard/contracts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import type { DecidedFacts } from './outcome-mapping.ts';
import { type TaskHandle, taskPlan } from './task-runner.ts';

/** Job progress doubles as the at-most-once marker: it is written before a non-idempotent call is sent. */
export interface DispatchMarker {
  dispatchedBy: string;
  dispatchedAt: number;
  /** A task's handle, recorded once the server created it: the call is resumable (task-runner.ts). */
  task?: unknown;
}

export function dispatchMarker(progress: unknown): DispatchMarker | undefined {
  if (progress && typeof progress === 'object' && 'dispatchedBy' in progress)
    return progress as DispatchMarker;
  return undefined;
}

/** What a picked-up call looks like before anything is sent. */
export interface PreSendInput {
  call: ToolCallJob;
  server: string;
  config: ServerConfig;
  session: Pick<ManagedSession, 'state' | 'tool' | 'protocolVersion' | 'extensionTasks'>;
  validator: ArgumentValidator;
  idempotent: boolean;
  marker: DispatchMarker | undefined;
  recordedTask: TaskHandle | undefined;
  previousAttempts: number;
  pickedUpAt: number;
}

export type PreSendVerdict =
  | { kind: 'outcome'; facts: DecidedFacts; log?: { previousWorker: string } }
  | { kind: 'put_back'; reason: string }
  | { kind: 'send'; tool: CatalogTool; plan: 'task' | 'call' };

/**
 * The checks a call passes before this worker considers sending it: at most once (another worker's
 * marker), its deadline, a session to send it on, the tool, its arguments, and whether it can run as the
 * task its tool may require. No I/O: the fence is the send's (call-send.ts), the credential the processor's.
 */
export function preSendChecks(input: PreSendInput): PreSendVerdict {
  const { call, server, config, session, marker, recordedTask, previousAttempts } = input;
  const name = `${server}/${call.tool}`;
  // At most once: a non-idempotent call that was already sent by a worker that then vanished
  // (its lock expired and BullMQ handed the job to us) must not run again.
  if (!input.idempotent && marker && !recordedTask) {
    return {
      kind: 'outcome',
      log: { previousWorker: marker.dispatchedBy },
      facts: {
        status: 'indeterminate',
        attempts: previousAttempts + 1,
        text: `The call to ${name} was sent, but the worker running it was lost before it answered. It is not idempotent, so it was not run again; it may or may not have taken effect.`,
        error: `worker ${marker.dispatchedBy} lost mid-call`,
      },
    };
  }
  if (previousAttempts === 0 && !marker && input.pickedUpAt > call.deadline) {
    return {
      kind: 'outcome',
      facts: {
        status: 'expired',
        attempts: 0,
        text: `The call to ${name} waited in the queue past its deadline and was not run.`,
        error: `picked up ${input.pickedUpAt - call.deadline} ms after the deadline`,
      },
    };
  }
  if (session.state !== 'ready' && session.state !== 'degraded') {
    return { kind: 'put_back', reason: `session is ${session.state}` };
  }
  const tool = session.tool(call.tool);
  if (!tool) {
    return {
      kind: 'outcome',
      facts: {
        status: 'failed',
        executed: 'no',
        attempts: 0,
        text: `Server ${server} has no tool named "${call.tool}".`,
        error: 'unknown_tool',
      },
    };
  }
  const check = input.validator.check(tool.inputSchema, call.arguments);
  if (!check.ok) {
    return {
      kind: 'outcome',
      facts: {
        status: 'invalid_arguments',
        attempts: 0,
        text: `Invalid arguments for ${server}__${call.tool}: ${check.errors.join('; ')}`,
        error: check.errors.join('; '),
      },
    };
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
    return {
      kind: 'outcome',
      facts: {
        status: 'failed',
        executed: 'no',
        attempts: 0,
        text: `${name} runs only as an MCP task (execution.taskSupport: required), and ${why}. The worker did not send it.`,
        error: 'task_required',
      },
    };
  }
  return { kind: 'send', tool, plan };
}
