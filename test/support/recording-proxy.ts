import { EventEmitter } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One JSON-RPC request that went through the proxy to the MCP server, as the server received it. */
export interface RecordedRequest {
  method: string;
  params: Record<string, unknown>;
  /** The Streamable HTTP session it was sent on (Mcp-Session-Id). */
  sessionId?: string;
}

/**
 * A thin HTTP pass-through in front of a Streamable HTTP MCP server that records every JSON-RPC request
 * it forwards. It stands in for the server's own request log where the server keeps none
 * (server-everything does not log task creation), so a test can count, for example, how many
 * task-augmented `tools/call` requests the server received. Bodies and streams pass unchanged.
 */
export class RecordingProxy {
  readonly requests: RecordedRequest[] = [];
  private readonly recorded = new EventEmitter();
  private readonly server: Server;

  private constructor(private readonly target: URL) {
    this.server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const body = Buffer.concat(chunks);
        this.record(body, incoming.headers['mcp-session-id']);
        const upstream = request(
          new URL(incoming.url ?? '/', this.target),
          { method: incoming.method, headers: { ...incoming.headers, host: this.target.host } },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          },
        );
        upstream.on('error', (error) => {
          if (!outgoing.headersSent) outgoing.writeHead(502);
          outgoing.end(String(error));
        });
        // A client that goes away (a killed worker) ends the upstream exchange too.
        outgoing.on('close', () => upstream.destroy());
        upstream.end(body);
      });
    });
  }

  static async start(target: string): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(new URL(target));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's URL for `path` (the MCP endpoint, e.g. /mcp). */
  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Resolves with the first recorded request that matches, as soon as the server receives it. */
  waitFor(
    match: (request: RecordedRequest) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<RecordedRequest> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.requests.find(match);
        if (!found) return;
        clearTimeout(timer);
        this.recorded.off('request', check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.recorded.off('request', check);
        reject(new Error(`the MCP server never received ${what}`));
      }, timeoutMs);
      this.recorded.on('request', check);
      check();
    });
  }

  private record(body: Buffer, sessionId: string | string[] | undefined): void {
    if (body.length === 0) return;
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
        if (message && typeof message === 'object' && 'method' in message) {
          const { method, params } = message as { method: string; params?: Record<string, unknown> };
          this.requests.push({
            method,
            params: params ?? {},
            ...(typeof sessionId === 'string' ? { sessionId } : {}),
          });
          this.recorded.emit('request');
        }
      }
    } catch {
      // not JSON-RPC: passed through unrecorded
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
