import type { Answer, LogLevel, TraceCarrier } from '@switchyard/contracts';

/** One call a door asks the fleet to run (docs/architecture.md §3, step 3). */
export interface ToolCallRequest {
  jobId: string;
  toolCallId: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  trace?: TraceCarrier;
  /** The calling team: the worker reaches the server with this team's credential. */
  team?: string;
  labels?: Record<string, string>;
  /** Overrides the server's queueTimeoutMs: how long the call may wait for a worker. */
  queueTimeoutMs?: number;
  /** A person's answer to the question the previous round of this call asked (docs/semantics.md §14). */
  answer?: Answer;
  /** The least severe log level of the server's messages to relay (a /mcp client's); none when absent. */
  logLevel?: LogLevel;
}

/** Why an explicitly cancelled job's calls were stopped, as workers and outcomes are told. */
export const JOB_CANCELLED = 'the job was cancelled';

/** A dispatcher step that failed in the background, named with its call. */
export class DispatchError extends Error {
  override readonly name = 'DispatchError';
}

/** The team a call is dispatched for; calls without one share a line. */
export function teamOf(data: { team?: string | undefined; labels: Record<string, string> }): string {
  return data.team ?? data.labels.team ?? '';
}
