import { findUnsafeJson } from '@switchyard/contracts';

/** JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object). */
export const JSON_RPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP 2026-07-28, Streamable HTTP: a mirrored header (Mcp-Method, Mcp-Name) missing or not matching the body. */
  headerMismatch: -32020,
} as const;

export type JsonRpcId = string | number | null;

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string };
}

export function jsonRpcError(id: JsonRpcId, code: number, message: string): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The request's id when it has a usable one, so that the client can match the error to its request. */
export function jsonRpcId(message: unknown): JsonRpcId {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Paths are shown up to this many segments: a path 64 levels deep says nothing more than its start. */
const SHOWN_SEGMENTS = 6;

function shortPath(path: string): string {
  const segments = path.split('.');
  return segments.length > SHOWN_SEGMENTS ? `${segments.slice(0, SHOWN_SEGMENTS).join('.')}…` : path;
}

function refusalOf(message: unknown, maxDepth: number, where: string): JsonRpcErrorBody | undefined {
  const problem = findUnsafeJson(message, maxDepth);
  if (!problem) return undefined;
  const limit = problem.reason === 'is nested too deeply' ? ` (more than ${maxDepth} levels)` : '';
  const code =
    problem.path === 'params' || problem.path.startsWith('params.')
      ? JSON_RPC_CODES.invalidParams
      : JSON_RPC_CODES.invalidRequest;
  return jsonRpcError(
    jsonRpcId(message),
    code,
    `${where}${shortPath(problem.path)} ${problem.reason}${limit}`,
  );
}

/**
 * The refusal of a /mcp body (one JSON-RPC message or a batch of them) that is nested deeper than
 * `maxDepth` or holds text PostgreSQL cannot store, checked before the MCP SDK sees it: the SDK
 * re-serialises the body recursively and overflows the stack on deep input (a 500), and /v1 refuses
 * the same input with a 400. Undefined when the body is fine (or absent: a GET has none).
 */
export function refuseUnsafeJsonRpc(body: unknown, maxDepth: number): JsonRpcErrorBody | undefined {
  if (body === undefined) return undefined;
  if (Array.isArray(body)) {
    for (const [index, message] of body.entries()) {
      const refusal = refusalOf(message, maxDepth, `batch message ${index}: `);
      if (refusal) return refusal;
    }
    return undefined;
  }
  if (body === null || typeof body !== 'object') {
    return jsonRpcError(
      null,
      JSON_RPC_CODES.invalidRequest,
      'the body must be a JSON-RPC message (an object) or a batch of them (an array)',
    );
  }
  return refusalOf(body, maxDepth, '');
}
