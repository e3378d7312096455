import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

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
export async function connectGateway(
  url: string,
  key: string | undefined,
  revision: Revision,
): Promise<GatewayClient> {
  const endpoint = new URL('/mcp', url);
  const info = { name: `switchyard-test-${revision}`, version: '1.0.0' };
  if (revision === '2025-11-25') {
    const client = new LegacyClient(info);
    await client.connect(new LegacyTransport(endpoint, { requestInit: auth(key) }));
    return client as unknown as GatewayClient;
  }
  const client = new ModernClient(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(endpoint, { requestInit: auth(key) }));
  // v2's callTool takes (params, options); v1's takes (params, resultSchema, options).
  return {
    listTools: () => client.listTools() as ReturnType<GatewayClient['listTools']>,
    callTool: (params, _schema, options) =>
      client.callTool(params, options) as unknown as Promise<Record<string, unknown>>,
    close: () => client.close(),
  };
}
