import { setTimeout as delay } from 'node:timers/promises';
import { McpServer, PROTOCOL_VERSION_META_KEY, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { LOG_LEVELS } from './log-levels.ts';
import { abortReason } from './meta.ts';
import { isMain } from './serve.ts';
import { serveModern } from './serve-modern.ts';

const startedAt = new Date(performance.timeOrigin).toISOString();

/**
 * A server that speaks only MCP 2026-07-28 (built on the v2 server SDK), to show a client negotiates
 * the new revision and keeps every promise on it. MODERN_LEDGER gets one record per tool call
 * phase with the trace context (`traceparent`, `tracestate`) and the protocol revision the request's
 * `_meta` envelope carried, so tests can assert what crossed the wire.
 */
export function createModernServer(): McpServer {
  const ledger = process.env.MODERN_LEDGER;
  // `logging`: `log` sends through ctx.mcpReq.log, which on 2026-07-28 sends nothing unless the request
  // names a level in its `_meta` (io.modelcontextprotocol/logLevel), and only messages at or above it.
  const server = new McpServer(
    { name: 'modern', version: '0.1.0' },
    { capabilities: { tools: {}, logging: {} } },
  );
  const record = (ctx: ServerContext, entry: Record<string, unknown>) =>
    appendLedger(ledger, { ...entry, ...wireFacts(ctx) });

  server.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns {text} at once.',
      inputSchema: z.object({ text: z.string().describe('What to echo') }),
      outputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ text }, ctx) => {
      record(ctx, { tool: 'echo', phase: 'done' });
      return { content: [{ type: 'text', text }], structuredContent: { text } };
    },
  );

  server.registerTool(
    'log',
    {
      title: 'Log',
      description:
        'Logs each line at its level (as far as the request asked for logs), then returns their count.',
      inputSchema: z.object({
        lines: z
          .array(
            z.object({
              level: z.enum(LOG_LEVELS),
              text: z.string().max(10_000),
            }),
          )
          .max(100),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ lines }, ctx) => {
      for (const line of lines) await ctx.mcpReq.log(line.level, line.text, 'modern');
      return { content: [{ type: 'text', text: `logged ${lines.length} line(s)` }] };
    },
  );

  server.registerTool(
    'fail',
    {
      title: 'Fail',
      description: 'Runs and reports a tool error (isError) carrying the given message.',
      inputSchema: z.object({ message: z.string().default('failed on purpose') }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ message }, ctx) => {
      record(ctx, { tool: 'fail', phase: 'done' });
      return { content: [{ type: 'text', text: message }], isError: true };
    },
  );

  server.registerTool(
    'add',
    {
      title: 'Add',
      description: 'Adds two integers between -1000 and 1000: {a, b} → {sum}.',
      inputSchema: z.object({ a: z.int().min(-1000).max(1000), b: z.int().min(-1000).max(1000) }),
      outputSchema: z.object({ sum: z.int() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ a, b }, ctx) => {
      record(ctx, { tool: 'add', phase: 'done' });
      return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
    },
  );

  server.registerTool(
    'sleep',
    {
      title: 'Sleep',
      description:
        'Waits ms milliseconds, sending progress every progressEveryMs when asked for progress; stops when cancelled.',
      inputSchema: z.object({
        ms: z.int().min(0).max(600_000),
        progressEveryMs: z.int().min(1).max(600_000).default(100),
      }),
      outputSchema: z.object({ slept: z.number() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ ms, progressEveryMs }, ctx) => {
      record(ctx, { tool: 'sleep', phase: 'start', ms });
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const signal = ctx.mcpReq.signal;
      try {
        for (let slept = 0; slept < ms; ) {
          const step = progressToken === undefined ? ms - slept : Math.min(progressEveryMs, ms - slept);
          await delay(step, undefined, { signal });
          slept += step;
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken, progress: slept, total: ms, message: `slept ${slept} of ${ms} ms` },
            });
          }
        }
      } catch (error) {
        if (signal.aborted) record(ctx, { tool: 'sleep', phase: 'cancelled', reason: abortReason(signal) });
        throw error;
      }
      record(ctx, { tool: 'sleep', phase: 'done', ms });
      return { content: [{ type: 'text', text: `slept ${ms} ms` }], structuredContent: { slept: ms } };
    },
  );

  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description: 'Returns the pid and start time of the server process answering this call.',
      inputSchema: z.object({}),
      outputSchema: z.object({ pid: z.number(), startedAt: z.string() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (_args, ctx) => {
      record(ctx, { tool: 'whoami', phase: 'done' });
      const identity = { pid: process.pid, startedAt };
      return { content: [{ type: 'text', text: JSON.stringify(identity) }], structuredContent: identity };
    },
  );

  server.registerTool(
    'grow',
    {
      title: 'Grow',
      description:
        "Adds a tool named `name` (it echoes) to this server instance, which announces the change (tools list_changed). Over stdio the instance is the connection's; over HTTP each request gets a fresh one.",
      inputSchema: z.object({ name: z.string().regex(/^[a-z][a-z0-9_]{0,30}$/) }),
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    ({ name }, ctx) => {
      record(ctx, { tool: 'grow', phase: 'done', name });
      server.registerTool(
        name,
        { description: `Added by grow: echoes {text}.`, inputSchema: z.object({ text: z.string() }) },
        ({ text }) => ({ content: [{ type: 'text', text }] }),
      );
      return { content: [{ type: 'text', text: `added ${name}` }] };
    },
  );

  return server;
}

/** What the request carried: the caller's trace context, the revision in its `_meta` envelope, its HTTP routing headers. */
function wireFacts(ctx: ServerContext): Record<string, unknown> {
  const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return {
    traceparent: meta?.traceparent,
    tracestate: meta?.tracestate,
    protocolVersion: envelope?.[PROTOCOL_VERSION_META_KEY],
    // Streamable HTTP only: the routing headers 2026-07-28 adds to every request.
    mcpMethod: ctx.http?.req?.headers.get('mcp-method') ?? undefined,
    mcpName: ctx.http?.req?.headers.get('mcp-name') ?? undefined,
  };
}

if (isMain(import.meta.url)) await serveModern(() => createModernServer());
