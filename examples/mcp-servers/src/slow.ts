import { setTimeout as delay } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { LOG_LEVELS } from './log-levels.ts';
import { abortReason, traceparentOf } from './meta.ts';
import { isMain, serve } from './serve.ts';

/**
 * Long-running tools for timeouts, progress and cancellation. Each call leaves a 'start'
 * record in SLOW_LEDGER, then 'done' or, when the client cancels (notifications/cancelled,
 * e.g. after a client-side timeout), 'cancelled' — proof that the cancel reached the server.
 */
/** What the conformance suite's `test_tool_with_logging` logs (tools-call-with-logging). */
const CONFORMANCE_LINES = [
  { level: 'info' as const, text: 'Tool execution started' },
  { level: 'info' as const, text: 'Tool processing data' },
  { level: 'info' as const, text: 'Tool execution completed' },
];

export function createSlowServer(): McpServer {
  const ledger = process.env.SLOW_LEDGER;
  // `logging`: log_lines sends log messages during its call (relayed to /mcp clients that ask).
  const server = new McpServer({ name: 'slow', version: '0.1.0' }, { capabilities: { logging: {} } });

  server.registerTool(
    'log_lines',
    {
      title: 'Log lines',
      description:
        "Sends each line as an MCP log message (notifications/message) at its level, gapMs apart, then returns how many it sent. Without lines: the conformance suite's three info lines.",
      inputSchema: {
        lines: z
          .array(z.object({ level: z.enum(LOG_LEVELS), text: z.string().max(100_000) }))
          .max(1_000)
          .default(CONFORMANCE_LINES),
        gapMs: z.number().int().min(0).max(10_000).default(50),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ lines, gapMs }, extra) => {
      for (const [index, line] of lines.entries()) {
        if (index > 0 && gapMs > 0) await delay(gapMs, undefined, { signal: extra.signal });
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: line.level, logger: 'slow', data: line.text },
        });
      }
      return { content: [{ type: 'text', text: `sent ${lines.length} log message(s)` }] };
    },
  );

  server.registerTool(
    'sleep',
    {
      title: 'Sleep',
      description:
        'Waits ms milliseconds, then returns {slept: ms}. Sends progress notifications every progressEveryMs when the caller asked for progress; stops when cancelled.',
      inputSchema: {
        ms: z.number().int().min(0).max(600_000).describe('How long to sleep'),
        progressEveryMs: z.number().int().min(1).max(600_000).default(100).describe('Progress interval'),
      },
      outputSchema: { slept: z.number() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ ms, progressEveryMs }, extra) => {
      const traceparent = traceparentOf(extra);
      appendLedger(ledger, { tool: 'sleep', phase: 'start', ms, traceparent });
      const progressToken = extra._meta?.progressToken;
      try {
        // Sleep in steps so each step can report progress; progress counts planned sleep,
        // so it rises strictly and ends exactly at total.
        for (let slept = 0; slept < ms; ) {
          const step = progressToken === undefined ? ms - slept : Math.min(progressEveryMs, ms - slept);
          await delay(step, undefined, { signal: extra.signal });
          slept += step;
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: slept, total: ms, message: `slept ${slept} of ${ms} ms` },
            });
          }
        }
      } catch (error) {
        if (extra.signal.aborted) {
          appendLedger(ledger, {
            tool: 'sleep',
            phase: 'cancelled',
            reason: abortReason(extra.signal),
            traceparent,
          });
        }
        throw error;
      }
      appendLedger(ledger, { tool: 'sleep', phase: 'done', ms, traceparent });
      return { content: [{ type: 'text', text: `slept ${ms} ms` }], structuredContent: { slept: ms } };
    },
  );

  // Keys whose first call has hung: the retry of the same call finds its key here and answers.
  const hungOnce = new Set<string>();
  server.registerTool(
    'hang_once',
    {
      title: 'Hang once',
      description:
        'The first call with a key never returns (only cancellation ends it); every later call with it answers at once. For retry tests: an idempotent call that times out once, then succeeds.',
      inputSchema: { key: z.string().min(1).describe('What makes calls the same') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ key }, extra) => {
      const traceparent = traceparentOf(extra);
      if (hungOnce.has(key)) {
        appendLedger(ledger, { tool: 'hang_once', phase: 'done', key, traceparent });
        return { content: [{ type: 'text', text: `answered ${key} on a retry` }] };
      }
      hungOnce.add(key);
      appendLedger(ledger, { tool: 'hang_once', phase: 'start', key, traceparent });
      await abortion(extra.signal);
      throw new Error('hang_once was cancelled');
    },
  );

  server.registerTool(
    'hang',
    {
      title: 'Hang',
      description: 'Never returns; only cancellation (or the server stopping) ends it. For timeout tests.',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (_args, extra) => {
      const traceparent = traceparentOf(extra);
      appendLedger(ledger, { tool: 'hang', phase: 'start', traceparent });
      await abortion(extra.signal);
      appendLedger(ledger, {
        tool: 'hang',
        phase: 'cancelled',
        reason: abortReason(extra.signal),
        traceparent,
      });
      // The SDK drops responses to cancelled requests; the error is for any other abort.
      throw new Error('hang was cancelled');
    },
  );

  return server;
}

function abortion(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

if (isMain(import.meta.url)) await serve(createSlowServer);
