import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP proxy that adds `Authorization: Bearer <key>` to every request it forwards, for MCP
 * clients that cannot send headers of their own (the conformance suite). Streams both ways, so SSE
 * responses pass through as they are written. With `rename`, a `tools/call` of a name in it is
 * forwarded as a call of the name it maps to (and its `Mcp-Name` header with it): the suite calls its
 * reference server's tools by their own names (`test_tool_with_logging`), which on /mcp are a fleet
 * server's `<server>__<tool>`.
 */
export async function startAuthProxy(
  target: string,
  key: string,
  options: { rename?: Record<string, string> } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, outgoing) => {
    void forwardBody(incoming, options.rename).then(({ body, name }) => {
      const headers: Record<string, string | string[] | undefined> = {
        ...incoming.headers,
        host: upstream.host,
        authorization: `Bearer ${key}`,
      };
      if (body) {
        headers['content-length'] = String(body.length);
        if (name && headers['mcp-name']) headers['mcp-name'] = name;
      }
      const forwarded = request(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          path: incoming.url,
          method: incoming.method,
          headers,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.destroy());
      outgoing.on('close', () => forwarded.destroy());
      if (body) forwarded.end(body);
      else incoming.pipe(forwarded);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The request's body rewritten when it is a tools/call of a renamed tool (read whole first), else
 * nothing: the request then streams through untouched.
 */
async function forwardBody(
  incoming: IncomingMessage,
  rename: Record<string, string> | undefined,
): Promise<{ body?: Buffer; name?: string }> {
  if (!rename || incoming.method !== 'POST') return {};
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  try {
    const message = JSON.parse(raw.toString('utf8')) as { method?: string; params?: { name?: string } };
    const name = message.params?.name;
    if (message.method === 'tools/call' && name && rename[name] && message.params) {
      message.params.name = rename[name];
      return { body: Buffer.from(JSON.stringify(message)), name: rename[name] };
    }
  } catch {
    // Not JSON: /mcp answers it as it would without the proxy.
  }
  return { body: raw };
}
