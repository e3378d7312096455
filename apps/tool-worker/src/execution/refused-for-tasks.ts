import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { ServerConfig } from '@switchyard/contracts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { TASKS_EXTENSION } from '../sessions/task-session.ts';

/**
 * Whether a plain call was refused, unrun, because the server wants it as a task: on 2026-07-28 a
 * tool says so only by answering -32021 (missing required client capability) naming the tasks
 * extension. With `tasks.mode: auto` and a session that speaks the extension, such a call is sent
 * again as a task; with `never` the refusal stands (`failed`, executed `no`).
 */
export function refusedForTasks(error: unknown, session: ManagedSession, config: ServerConfig): boolean {
  if (config.tasks.mode !== 'auto' || session.extensionTasks === undefined) return false;
  if (!(error instanceof ProtocolError) || error.code !== ProtocolErrorCode.MissingRequiredClientCapability) {
    return false;
  }
  const data = error.data as { requiredCapabilities?: { extensions?: Record<string, unknown> } } | undefined;
  return data?.requiredCapabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}
