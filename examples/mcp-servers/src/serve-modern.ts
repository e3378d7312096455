import { createServer as createHttpServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { HTTP_PATH, httpPort, listenAndAnnounce, onTermination, sendError } from './serve.ts';

/**
 * Runs a server that speaks MCP 2026-07-28 ONLY (no `initialize`, no session): over stdio by default,
 * or over Streamable HTTP on 127.0.0.1 with `--http <port>` (or MCP_HTTP_PORT; 0 picks a free port).
 * Older clients are refused with the unsupported-protocol-version error, which is the point: a
 * client must negotiate the new revision to use it. Same CLI and `listening` line as serve.ts.
 */
export async function serveModern(factory: McpServerFactory): Promise<void> {
  try {
    const port = httpPort(process.argv.slice(2), process.env.MCP_HTTP_PORT);
    if (port === undefined) serveModernStdio(factory);
    else await serveModernHttp(factory, port);
  } catch (error) {
    process.stderr.write(
      `failed to start MCP server: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
}

function serveModernStdio(factory: McpServerFactory): void {
  const handle = serveStdio(factory, {
    legacy: 'reject',
    onerror: (error) => process.stderr.write(`mcp error: ${error.message}\n`),
  });
  // As in serve.ts: the client owns our lifetime, so a closed stdin ends the process at once.
  const exitNow = () => process.exit(0);
  process.stdin.once('end', exitNow);
  process.stdin.once('close', exitNow);
  process.stdout.on('error', exitNow);
  onTermination(() => handle.close());
}

async function serveModernHttp(factory: McpServerFactory, port: number): Promise<void> {
  // One server instance per request (the factory), nothing kept between requests: stateless.
  const handler = createMcpHandler(factory, {
    legacy: 'reject',
    onerror: (error) => process.stderr.write(`mcp error: ${error.message}\n`),
  });
  const node = toNodeHandler(handler);
  const http = createHttpServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (pathname !== HTTP_PATH) return sendError(res, 404, -32601, `Not found: use ${HTTP_PATH}`);
    node(req, res).catch((error: unknown) => {
      process.stderr.write(`request failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      if (!res.headersSent) sendError(res, 500, -32603, 'Internal error');
      else res.end();
    });
  });
  await listenAndAnnounce(http, port, () => handler.close());
}
