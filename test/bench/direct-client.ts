import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { exampleServerPath, REPO_ROOT, tsxArgs } from '../support/paths.ts';

/** The recorder example server, started the way the workers start it (source or compiled: paths.ts). */
function recorderTransport(): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: tsxArgs(exampleServerPath('recorder')),
    cwd: REPO_ROOT,
    stderr: 'ignore',
  });
}

function checkEcho(result: Awaited<ReturnType<Client['callTool']>>, text: string): void {
  const content = result.content as Array<{ type: string; text?: string }> | undefined;
  if (result.isError || content?.[0]?.text !== text)
    throw new Error(`echo answered ${JSON.stringify(result).slice(0, 300)}`);
}

/** A warm MCP session held in this process: the MCP SDK Client over stdio, no queue at all. */
export class WarmSession {
  private constructor(private readonly client: Client) {}

  static async open(): Promise<WarmSession> {
    const client = new Client({ name: 'switchyard-bench', version: '0.1.0' });
    await client.connect(recorderTransport());
    return new WarmSession(client);
  }

  async echo(text: string): Promise<void> {
    checkEcho(await this.client.callTool({ name: 'echo', arguments: { text } }), text);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/**
 * What per-call-session adapters do: spawn the server, handshake, call, and close. Returns the time to
 * the result (spawn + handshake + call); closing is awaited afterwards but not counted.
 */
export async function echoInNewSession(text: string): Promise<number> {
  const start = performance.now();
  const client = new Client({ name: 'switchyard-bench-per-call', version: '0.1.0' });
  try {
    await client.connect(recorderTransport());
    checkEcho(await client.callTool({ name: 'echo', arguments: { text } }), text);
    return performance.now() - start;
  } finally {
    await client.close();
  }
}
