import { setTimeout as delay } from 'node:timers/promises';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { isMain, serve } from './serve.ts';

/** How often the background work looks at its task (cancelled?) and reports its status. */
const STEP_MS = 100;

/**
 * A 2025-11-25 task server: `compile-report` can only run as a task (execution.taskSupport: required).
 * Its own ledger (REPORTS_LEDGER) records every task it starts ('created' with the task id), and how each
 * ended ('done', or 'cancelled' when a `tasks/cancel` reached it) — the evidence of how often a task
 * was started and whether a cancel arrived. Tasks live in this process, per MCP session (HTTP) as the
 * SDK's task store keeps them.
 */
export function createReportsServer(): McpServer {
  const ledger = process.env.REPORTS_LEDGER;
  const server = new McpServer(
    { name: 'reports', version: '0.1.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: new InMemoryTaskStore(),
    },
  );

  server.experimental.tasks.registerToolTask(
    'compile-report',
    {
      title: 'Compile report',
      description:
        'Compiles a report on a topic in the background for ms milliseconds; runs only as an MCP task. Reports its progress as the task status message; stops when the task is cancelled.',
      inputSchema: {
        topic: z.string().min(1).describe('What the report is about'),
        ms: z.number().int().min(0).max(600_000).default(2_000).describe('How long compiling takes'),
      },
      execution: { taskSupport: 'required' },
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    {
      createTask: async ({ topic, ms }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 10 * 60_000, pollInterval: 200 });
        appendLedger(ledger, { tool: 'compile-report', phase: 'created', taskId: task.taskId, topic });
        void compile(task.taskId, topic, ms, extra.taskStore).catch((error: unknown) =>
          process.stderr.write(`report ${task.taskId} failed: ${String(error)}\n`),
        );
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) =>
        (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );

  async function compile(taskId: string, topic: string, ms: number, store: RequestTaskStore): Promise<void> {
    for (let done = 0; done < ms; done += STEP_MS) {
      if ((await store.getTask(taskId))?.status === 'cancelled') {
        appendLedger(ledger, { tool: 'compile-report', phase: 'cancelled', taskId, topic });
        return;
      }
      if (done % 1_000 === 0) await store.updateTaskStatus(taskId, 'working', `compiled ${done} of ${ms} ms`);
      await delay(Math.min(STEP_MS, ms - done));
    }
    appendLedger(ledger, { tool: 'compile-report', phase: 'done', taskId, topic });
    await store.storeTaskResult(taskId, 'completed', {
      content: [{ type: 'text', text: `Report on ${topic}, compiled in ${ms} ms.` }],
    });
  }

  return server;
}

if (isMain(import.meta.url)) await serve(createReportsServer);
