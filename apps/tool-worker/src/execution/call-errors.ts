import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { SessionNotReadyError } from '../sessions/managed-session.ts';

/** How a thrown call failed, which decides status, `executed`, and whether a retry is allowed. */
export type CallFailure =
  | { kind: 'not_sent'; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'cancelled'; message: string }
  | { kind: 'invalid_params'; message: string }
  | { kind: 'unknown_tool'; message: string }
  | { kind: 'transport'; message: string }
  | { kind: 'protocol'; message: string; code: number };

export function classifyCallError(error: unknown, cancelled: boolean): CallFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SessionNotReadyError) return { kind: 'not_sent', message };
  // The SDK's send() throws this before anything is written: the call never left the worker.
  if (error instanceof Error && message === 'Not connected') return { kind: 'not_sent', message };
  if (cancelled) return { kind: 'cancelled', message };
  if (error instanceof McpError) {
    switch (error.code) {
      case ErrorCode.RequestTimeout:
        return { kind: 'timeout', message };
      case ErrorCode.ConnectionClosed:
        return { kind: 'transport', message };
      case ErrorCode.InvalidParams:
        return { kind: 'invalid_params', message };
      case ErrorCode.MethodNotFound:
        return { kind: 'unknown_tool', message };
      default:
        return { kind: 'protocol', message, code: error.code };
    }
  }
  // The server answered, but not with a CallToolResult: a protocol error, never retried.
  if (error instanceof ZodError) {
    const issue = error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'result';
    return {
      kind: 'protocol',
      message: `malformed tools/call result: ${where}: ${issue?.message ?? 'invalid'}`,
      code: ErrorCode.InvalidRequest,
    };
  }
  // fetch failures, broken pipes, HTTP status errors from the Streamable HTTP transport.
  return { kind: 'transport', message };
}
