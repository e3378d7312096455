import {
  type FetchLike,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ServerConfig } from '@switchyard/contracts';
import type { StderrTail } from './stderr-tail.ts';
import { watchResponseStreams } from './stream-watch.ts';

export interface OpenedTransport {
  transport: Transport;
  /** The stdio child's pid once spawned (stdio only). */
  pid: () => number | undefined;
}

/**
 * One fresh transport per connect: MCP transports are single-use. `fetchFn` (HTTP and SSE) is how every
 * request gets the credential of the identity it is sent for (credentials/credential-fetch.ts).
 */
export function createTransport(
  config: ServerConfig,
  stderr: StderrTail,
  fetchFn?: FetchLike,
): OpenedTransport {
  switch (config.transport) {
    case 'stdio': {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        // Piped, not inherited: the worker's stdout/stderr are structured logs, and the tail is
        // what we attach to a connect failure.
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
      return { transport, pid: () => transport.pid ?? undefined };
    }
    case 'http': {
      const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers },
        ...(fetchFn ? { fetch: fetchFn } : {}),
      });
      watchResponseStreams(transport);
      return { transport, pid: () => undefined };
    }
    case 'sse':
      return {
        transport: new SSEClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers },
          ...(fetchFn ? { fetch: fetchFn } : {}),
          eventSourceInit: {
            fetch: (url, init) =>
              (fetchFn ?? fetch)(url, { ...init, headers: { ...config.headers, ...init?.headers } }),
          },
        }),
        pid: () => undefined,
      };
  }
}
