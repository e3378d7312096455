import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { appendLedger } from './ledger.ts';

export type ServerFactory = () => McpServer;

export const HTTP_PATH = '/mcp';

/**
 * Runs an MCP server built by `createServer`: over stdio by default, or over Streamable HTTP
 * on 127.0.0.1 when started with `--http <port>` (or MCP_HTTP_PORT is set; port 0 picks a free one).
 */
export async function serve(createServer: ServerFactory): Promise<void> {
  try {
    const port = httpPort(process.argv.slice(2), process.env.MCP_HTTP_PORT);
    if (port === undefined) await serveStdio(createServer);
    else await serveHttp(createServer, port);
  } catch (error) {
    // stderr only: in stdio mode stdout belongs to the protocol.
    process.stderr.write(
      `failed to start MCP server: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
}

/** True when the module at `moduleUrl` is the script node was asked to run (not an import). */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

export function httpPort(argv: string[], fromEnv: string | undefined): number | undefined {
  let raw: string | undefined;
  const index = argv.findIndex((arg) => arg === '--http' || arg.startsWith('--http='));
  if (index >= 0) {
    const flag = argv[index] ?? '';
    raw = flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : argv[index + 1];
    if (raw === undefined) throw new Error('--http needs a port (0 picks a free one)');
  } else if (fromEnv) {
    raw = fromEnv;
  } else {
    return undefined;
  }
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new Error(`invalid HTTP port: ${raw}`);
  return port;
}

/**
 * Every completed MCP handshake is written to SESSION_LEDGER, so tests can count how many sessions a
 * client really opened (warm reuse means one, however many calls follow).
 */
function withSessionLedger(server: McpServer): McpServer {
  server.server.oninitialized = () =>
    appendLedger(process.env.SESSION_LEDGER, {
      event: 'initialized',
      client: server.server.getClientVersion()?.name,
    });
  return server;
}

async function serveStdio(createServer: ServerFactory): Promise<void> {
  const server = withSessionLedger(createServer());
  // The client owns our lifetime: when it closes our stdin (or dies) there is nobody left to
  // answer, so exit at once. In-flight calls are abandoned, which is what a test killing the
  // caller mid-call wants to observe (a ledger 'start' without its 'done').
  const exitNow = () => process.exit(0);
  process.stdin.once('end', exitNow);
  process.stdin.once('close', exitNow);
  // Writing to a closed pipe raises EPIPE asynchronously; treat it like a closed stdin.
  process.stdout.on('error', exitNow);
  onTermination(async () => {
    await server.close();
  });
  await server.connect(new StdioServerTransport());
}

interface Session {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
}

/** What a Streamable HTTP request may carry: the caller's verified token (auth middleware), a parsed body. */
export type McpHttpRequest = IncomingMessage & { auth?: AuthInfo };

export interface HttpSessions {
  /** Serves one request to HTTP_PATH; `parsedBody` when a middleware already read the body. */
  route(req: McpHttpRequest, res: ServerResponse, parsedBody?: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * The Streamable HTTP sessions of one server process. One McpServer per session: an McpServer owns
 * exactly one transport, and per-session state (initialize, capabilities, in-flight requests) must not
 * leak between clients.
 */
export function httpSessions(createServer: ServerFactory): HttpSessions {
  const sessions = new Map<string, Session>();

  const openSession = async (req: McpHttpRequest, res: ServerResponse, parsedBody: unknown) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
    });
    const server = withSessionLedger(createServer());
    const session: Session = { server, transport };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    // The transport itself rejects anything but an initialize request here, so we need not
    // parse the body; we only drop the pair if no session came out of it.
    await transport.handleRequest(req, res, parsedBody);
    if (transport.sessionId === undefined) await server.close();
  };

  const route = async (req: McpHttpRequest, res: ServerResponse, parsedBody?: unknown) => {
    const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (pathname !== HTTP_PATH) return sendError(res, 404, -32601, `Not found: use ${HTTP_PATH}`);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return sendError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res, parsedBody);
    }
    if (sessionId === undefined && req.method === 'POST') return openSession(req, res, parsedBody);
    return sendError(res, 400, -32000, 'Bad Request: a single Mcp-Session-Id header is required');
  };

  return {
    route,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map(({ server }) => server.close()));
    },
  };
}

async function serveHttp(createServer: ServerFactory, port: number): Promise<void> {
  const { route, close } = httpSessions(createServer);

  const http = createHttpServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      process.stderr.write(`request failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      if (!res.headersSent) sendError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });

  await listenAndAnnounce(http, port, close);
}

/**
 * Listens on 127.0.0.1 and prints the one `listening` line a parent waits for; on SIGTERM/SIGINT runs
 * `close` (the MCP side), then drops every connection.
 */
export async function listenAndAnnounce(
  http: HttpServer,
  port: number,
  close: () => Promise<void>,
): Promise<void> {
  onTermination(async () => {
    await close();
    http.closeAllConnections();
    http.close();
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('HTTP server has no TCP address');
  // The one line a parent process waits for to learn the URL (port 0 means "any free port").
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${address.port}${HTTP_PATH}` })}\n`);
}

export function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Closes transports on SIGTERM/SIGINT before exiting, so clients see a clean close. */
export function onTermination(close: () => Promise<void>): void {
  let closing = false;
  const handler = () => {
    if (closing) return;
    closing = true;
    // A transport that refuses to close must not keep the process alive.
    setTimeout(() => process.exit(0), 2000).unref();
    close()
      .catch((error: unknown) => process.stderr.write(`error while closing: ${String(error)}\n`))
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
