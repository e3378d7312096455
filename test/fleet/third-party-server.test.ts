import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from '../support/fleet.ts';
import { EVERYTHING_SERVER } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import type { TestProcess } from '../support/processes.ts';
import { waitForStderr } from '../support/stderr.ts';

const TRANSPORTS = ['stdio', 'http', 'sse'] as const;

/**
 * A server we did not write: @modelcontextprotocol/server-everything, over stdio, Streamable HTTP and
 * legacy SSE, through the whole path (dispatcher → queue → worker → MCP session).
 */
describe('@modelcontextprotocol/server-everything through the fleet', () => {
  let fleet: Fleet;
  let worker: TestProcess;
  let call = 0;

  beforeAll(async () => {
    const [httpPort, ssePort] = await Promise.all([freePort(), freePort()]);
    const common = { timeoutMs: 800, trusted: true };
    fleet = new Fleet('everything', () => ({
      'everything-stdio': {
        transport: 'stdio',
        command: process.execPath,
        args: [EVERYTHING_SERVER, 'stdio'],
        ...common,
      },
      'everything-http': { transport: 'http', url: `http://127.0.0.1:${httpPort}/mcp`, ...common },
      'everything-sse': { transport: 'sse', url: `http://127.0.0.1:${ssePort}/sse`, ...common },
      // The same server with a hard cap that progress cannot extend.
      'everything-capped': {
        transport: 'stdio',
        command: process.execPath,
        args: [EVERYTHING_SERVER, 'stdio'],
        ...common,
        maxTimeoutMs: 1_000,
        retry: { attempts: 1 },
      },
    }));
    const serve = (mode: string, port: number) => {
      const server = fleet.group.start(`everything ${mode}`, [EVERYTHING_SERVER, mode], {
        PORT: String(port),
      });
      return waitForStderr(server, `port ${port}`);
    };
    await Promise.all([serve('streamableHttp', httpPort), serve('sse', ssePort)]);
    worker = await fleet.startWorker({ id: 'w-everything' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const run = async (server: string, tool: string, args: Record<string, unknown>) =>
    (await fleet.dispatcher()).dispatch({
      jobId: 'everything',
      toolCallId: `c${++call}`,
      server,
      tool,
      arguments: args,
    });

  for (const transport of TRANSPORTS) {
    const server = `everything-${transport}`;

    it(`${transport}: echo`, async () => {
      const outcome = await run(server, 'echo', { message: `hello over ${transport}` });
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      expect(outcome.text).toContain(`hello over ${transport}`);
    });

    it(`${transport}: get-sum`, async () => {
      const outcome = await run(server, 'get-sum', { a: 19, b: 23 });
      expect(outcome.status).toBe('ok');
      expect(outcome.text).toContain('42');
    });

    it(`${transport}: get-structured-content`, async () => {
      const outcome = await run(server, 'get-structured-content', { location: 'Chicago' });
      expect(outcome.status).toBe('ok');
      expect(outcome.structuredContent).toMatchObject({
        temperature: expect.any(Number),
        conditions: expect.any(String),
      });
    });

    it(`${transport}: arguments outside the published schema are refused before sending`, async () => {
      const outcome = await run(server, 'get-structured-content', { location: 'Atlantis' });
      expect(outcome).toMatchObject({ status: 'invalid_arguments', executed: 'no' });
    });
  }

  it('trigger-long-running-operation: progress keeps a call alive past its per-attempt timeout', async () => {
    // 1.6 s of work against an 800 ms timeout: only the 4 progress notifications keep it going.
    const outcome = await run('everything-stdio', 'trigger-long-running-operation', {
      duration: 1.6,
      steps: 4,
    });
    expect(outcome).toMatchObject({ status: 'ok', attempts: 1 });
    expect(outcome.text).toContain('Long running operation completed');
    const progress = worker.logs.filter(
      (log) => log.msg === 'tool call progress' && log.server === 'everything-stdio',
    );
    // The SDK drops a progress notification that arrives after the response, so the last may be missing.
    expect(progress.length).toBeGreaterThanOrEqual(3);
  });

  it('trigger-long-running-operation: progress cannot extend a call past maxTimeoutMs', async () => {
    const outcome = await run('everything-capped', 'trigger-long-running-operation', {
      duration: 3,
      steps: 6,
    });
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
  });
});
