import { setTimeout as delay } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { preciseNow, traceparentOf } from './meta.ts';
import { isMain, serve } from './serve.ts';

/**
 * Records when each call ran. Tests compare the [start, end] intervals in RECORDER_LEDGER
 * (sub-millisecond epoch times, comparable across processes) to prove how many calls
 * overlapped, i.e. what concurrency the workers actually achieved.
 */
export function createRecorderServer(): McpServer {
  const ledger = process.env.RECORDER_LEDGER;
  const server = new McpServer({ name: 'recorder', version: '0.1.0' });

  server.registerTool(
    'record',
    {
      title: 'Record a call',
      description: 'Sleeps ms milliseconds and returns (and records) when the call started and ended.',
      inputSchema: {
        ms: z.number().int().min(0).max(10_000).default(20).describe('How long the call takes'),
        label: z.string().optional().describe('Free-form tag copied into the record'),
      },
      outputSchema: { label: z.string().optional(), start: z.number(), end: z.number() },
      annotations: {
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    async ({ ms, label }, extra) => {
      const start = preciseNow();
      await delay(ms);
      const end = preciseNow();
      appendLedger(ledger, { tool: 'record', label, start, end, traceparent: traceparentOf(extra) });
      return {
        content: [{ type: 'text', text: JSON.stringify({ label, start, end }) }],
        structuredContent: { label, start, end },
      };
    },
  );

  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns the text unchanged, at once and without recording (for latency benchmarks).',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );

  return server;
}

if (isMain(import.meta.url)) await serve(createRecorderServer);
