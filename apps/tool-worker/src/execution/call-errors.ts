import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { SessionNotReadyError } from '../sessions/managed-session.ts';

/** How a thrown call failed, which decides status, `executed`, and whether a retry is allowed. */
export type CallFailure =
  | { kind: 'not_sent'; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'cancelled'; message: string }
  | { kind: 'invalid_params'; message: string }
  | { kind: 'unknown_tool'; message: string }
  | { kind: 'refused'; message: string }
  | { kind: 'transport'; message: string }
  /** Sent, then the connection closed or the response stream broke before any answer: it may have run. */
  | { kind: 'connection_lost'; message: string }
  | { kind: 'protocol'; message: string; code: number };

export function classifyCallError(error: unknown, cancelled: boolean): CallFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SessionNotReadyError) return { kind: 'not_sent', message };
  // The SDK throws these before anything is written: the call never left the worker.
  if (error instanceof SdkError && error.code === SdkErrorCode.NotConnected)
    return { kind: 'not_sent', message };
  if (!(error instanceof SdkError) && error instanceof Error && message === 'Not connected') {
    return { kind: 'not_sent', message };
  }
  if (cancelled) return { kind: 'cancelled', message };
  if (error instanceof SdkError) {
    switch (error.code) {
      case SdkErrorCode.RequestTimeout:
        return { kind: 'timeout', message };
      // The server answered, but not with a CallToolResult: a protocol error, never retried.
      case SdkErrorCode.InvalidResult:
        return {
          kind: 'protocol',
          message: `malformed tools/call result: ${message}`,
          code: ProtocolErrorCode.InvalidRequest,
        };
      // The connection closed (child exited, HTTP response stream broken) with the request in flight.
      case SdkErrorCode.ConnectionClosed:
        return { kind: 'connection_lost', message };
      // HTTP status errors, failed sends: the call may have run.
      default:
        return { kind: 'transport', message };
    }
  }
  if (error instanceof ProtocolError) {
    switch (error.code) {
      case ProtocolErrorCode.InvalidParams:
        return { kind: 'invalid_params', message };
      case ProtocolErrorCode.MethodNotFound:
        return { kind: 'unknown_tool', message };
      // Refused at the protocol layer before any tool code ran: a malformed or unsupported request,
      // a client capability the server needs (e.g. tasks), a revision it does not speak.
      case ProtocolErrorCode.InvalidRequest:
      case ProtocolErrorCode.MissingRequiredClientCapability:
      case ProtocolErrorCode.UnsupportedProtocolVersion:
        return { kind: 'refused', message };
      default:
        // The JSON-RPC code is part of what the server said: keep it in the detail, as v1 did.
        return {
          kind: 'protocol',
          message: message.includes(String(error.code)) ? message : `MCP error ${error.code}: ${message}`,
          code: error.code,
        };
    }
  }
  // The HTTP connection carrying the request closed before its answer (the POST was written).
  if (SOCKET_CLOSED.has(causeCode(error))) return { kind: 'connection_lost', message };
  // Other fetch failures (refused connections, DNS), broken pipes.
  return { kind: 'transport', message };
}

/** undici's codes for a socket that closed under a request it had sent (fetch's TypeError carries them as `cause`). */
const SOCKET_CLOSED = new Set<unknown>(['UND_ERR_SOCKET', 'ECONNRESET']);

function causeCode(error: unknown): unknown {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code;
}
