import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { traceparentOf } from './meta.ts';
import { isMain, serve } from './serve.ts';

const startedAt = new Date(performance.timeOrigin).toISOString();

/**
 * A server that can be made to die mid-call, to test how workers notice a lost session and
 * respawn it. whoami tells which process (and which incarnation) answered; CRASHY_LEDGER
 * shows every call that reached a process, including the one that killed it.
 */
export function createCrashyServer(): McpServer {
  const ledger = process.env.CRASHY_LEDGER;
  const server = new McpServer({ name: 'crashy', version: '0.1.0' });

  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description: 'Returns the pid and start time of the server process answering this call.',
      inputSchema: {},
      outputSchema: { pid: z.number(), startedAt: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (_args, extra) => {
      appendLedger(ledger, { tool: 'whoami', phase: 'start', traceparent: traceparentOf(extra) });
      const identity = { pid: process.pid, startedAt };
      return { content: [{ type: 'text', text: JSON.stringify(identity) }], structuredContent: identity };
    },
  );

  server.registerTool(
    'crash',
    {
      title: 'Crash',
      description:
        'Kills the server process (exit code 1) without answering, as if it died mid-call; `stderr` is written to stderr first, as a careless server logs the request it dies on.',
      inputSchema: { stderr: z.string().optional() },
    },
    ({ stderr }, extra) => {
      appendLedger(ledger, { tool: 'crash', phase: 'start', traceparent: traceparentOf(extra) });
      if (stderr === undefined) process.exit(1);
      // Exit once the line is out: a pipe's write may still be pending when process.exit runs.
      process.stderr.write(`${stderr}\n`, () => process.exit(1));
      return new Promise<never>(() => undefined);
    },
  );

  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns the text unchanged.',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ text }, extra) => {
      appendLedger(ledger, { tool: 'echo', phase: 'start', traceparent: traceparentOf(extra) });
      return { content: [{ type: 'text', text }] };
    },
  );

  server.registerTool(
    'grow',
    {
      title: 'Grow a tool',
      description:
        'Registers a new echo-like tool with the given name, so the server sends notifications/tools/list_changed.',
      inputSchema: { name: z.string().regex(/^[a-z][a-z0-9_-]{0,40}$/) },
    },
    ({ name }) => {
      appendLedger(ledger, { tool: 'grow', phase: 'start', name });
      server.registerTool(
        name,
        { description: `Grown echo tool "${name}"`, inputSchema: { text: z.string() } },
        ({ text }) => ({
          content: [{ type: 'text', text }],
        }),
      );
      return { content: [{ type: 'text', text: `registered ${name}` }] };
    },
  );

  // Calls per key, for `flaky`: kept in memory because a hanging call does not kill the process.
  const flakyCalls = new Map<string, number>();
  server.registerTool(
    'flaky',
    {
      title: 'Flaky',
      description:
        'The first `failures` calls with a given key hang until the caller cancels them; later calls answer at once. For testing timeouts and retries.',
      inputSchema: { key: z.string().min(1), failures: z.number().int().min(0).max(10) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ key, failures }, extra) => {
      const attempt = (flakyCalls.get(key) ?? 0) + 1;
      flakyCalls.set(key, attempt);
      appendLedger(ledger, {
        tool: 'flaky',
        phase: 'start',
        key,
        attempt,
        traceparent: traceparentOf(extra),
      });
      if (attempt <= failures) {
        await new Promise<void>((resolve) =>
          extra.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        appendLedger(ledger, { tool: 'flaky', phase: 'cancelled', key, attempt });
        return { content: [{ type: 'text', text: 'cancelled' }], isError: true };
      }
      return {
        content: [{ type: 'text', text: `answered on attempt ${attempt}` }],
        structuredContent: { attempt },
      };
    },
  );

  return server;
}

if (isMain(import.meta.url)) await serve(createCrashyServer);
