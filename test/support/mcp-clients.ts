import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import { withTaskCapabilityV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** The two MCP revisions /mcp serves, each with the client SDK that speaks it. */
export type Revision = '2025-11-25' | '2026-07-28';
export const REVISIONS: Revision[] = ['2025-11-25', '2026-07-28'];

/** What the tests use of either SDK's client (both have these with the same shapes). */
export interface GatewayClient {
  listTools: () => Promise<{ tools: Array<Record<string, unknown> & { name: string }> }>;
  callTool: (
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: {
      signal?: AbortSignal;
      timeout?: number;
      onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
    },
  ) => Promise<Record<string, unknown>>;
  close: () => Promise<void>;
}

const auth = (key: string | undefined): RequestInit =>
  key ? { headers: { authorization: `Bearer ${key}` } } : {};

/**
 * Connects to `<url>/mcp` with a team key: `2025-11-25` with the v1 SDK (`@modelcontextprotocol/sdk`),
 * `2026-07-28` with the v2 client (`@modelcontextprotocol/client`) pinned to that revision.
 */
/** One `notifications/message` a client heard. */
export interface HeardLog {
  level: string;
  logger?: string | undefined;
  data: unknown;
}

export async function connectGateway(
  url: string,
  key: string | undefined,
  revision: Revision,
  options: { onLog?: (log: HeardLog) => void } = {},
): Promise<GatewayClient> {
  const endpoint = new URL('/mcp', url);
  const info = { name: `switchyard-test-${revision}`, version: '1.0.0' };
  if (revision === '2025-11-25') {
    const client = new LegacyClient(info);
    const { onLog } = options;
    if (onLog) client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onLog(n.params));
    await client.connect(new LegacyTransport(endpoint, { requestInit: auth(key) }));
    return client as unknown as GatewayClient;
  }
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const { onLog } = options;
  if (onLog) client.setNotificationHandler('notifications/message', (n) => onLog(n.params));
  await client.connect(new ModernTransport(endpoint, { requestInit: auth(key) }));
  // v2's callTool takes (params, options); v1's takes (params, resultSchema, options).
  return {
    listTools: () => client.listTools() as ReturnType<GatewayClient['listTools']>,
    callTool: (params, _schema, options) =>
      client.callTool(params, options) as unknown as Promise<Record<string, unknown>>,
    close: () => client.close(),
  };
}

/** One JSON-RPC answer: its result, or its error. */
export type RawAnswer =
  | { result: Record<string, unknown>; error?: undefined }
  | { result?: undefined; error: { code: number; message: string; data?: unknown } };

/** What a 2026-07-28 request names in its `Mcp-Name` header (SEP-2243, SEP-2663 for tasks/*). */
const NAME_FIELD: Record<string, string> = {
  'tools/call': 'name',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * Raw 2026-07-28 JSON-RPC requests to `<url>/mcp` with a team key, each a POST carrying the per-request
 * envelope (`_meta` protocol version, client info and capabilities) and the standard headers — what the
 * tasks extension needs, since the v2 SDK Client refuses a `resultType: "task"` answer and has no
 * `tasks/*` methods. With `tasks: true` the request declares `io.modelcontextprotocol/tasks` in its
 * client capabilities (through ext-tasks' own `withTaskCapabilityV2`); `capabilities` are the rest it
 * declares (e.g. `elicitation`). A response sent as an SSE stream
 * is read to its end and the answer to this request picked out of it.
 */
export function rawModernRequester(url: string, key: string) {
  const endpoint = new URL('/mcp', url);
  let nextId = 0;
  return async (
    method: string,
    params: Record<string, unknown>,
    options: { tasks?: boolean; capabilities?: Record<string, JsonValue> } = {},
  ): Promise<RawAnswer> => {
    const id = ++nextId;
    const envelope = {
      ...params,
      _meta: {
        ...((params._meta as Record<string, unknown> | undefined) ?? {}),
        [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
        [CLIENT_INFO_META_KEY]: { name: 'switchyard-test-tasks', version: '1.0.0' },
        [CLIENT_CAPABILITIES_META_KEY]: options.capabilities ?? {},
      },
    } as Record<string, JsonValue>;
    const body = {
      jsonrpc: '2.0',
      id,
      method,
      params: options.tasks ? withTaskCapabilityV2(envelope) : envelope,
    };
    const field = NAME_FIELD[method];
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(field ? { 'mcp-name': String(params[field]) } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => JSON.parse(line.slice('data:'.length)))
      : [JSON.parse(text)];
    const answer = messages.find((message) => message?.id === id);
    if (!answer) throw new Error(`${method}: no answer to request ${id} (HTTP ${response.status}): ${text}`);
    return answer.error ? { error: answer.error } : { result: answer.result };
  };
}
