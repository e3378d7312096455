import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerConfig } from '@switchyard/contracts';
import type { StderrTail } from './stderr-tail.ts';

export interface OpenedTransport {
  transport: Transport;
  /** The stdio child's pid once spawned (stdio only). */
  pid: () => number | undefined;
}

/** One fresh transport per connect: MCP transports are single-use. */
export function createTransport(config: ServerConfig, stderr: StderrTail): OpenedTransport {
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
    case 'http':
      return {
        transport: new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers },
        }),
        pid: () => undefined,
      };
    case 'sse':
      return {
        transport: new SSEClientTransport(new URL(config.url), {
          requestInit: { headers: config.headers },
          eventSourceInit: {
            fetch: (url, init) => fetch(url, { ...init, headers: { ...config.headers, ...init?.headers } }),
          },
        }),
        pid: () => undefined,
      };
  }
}
