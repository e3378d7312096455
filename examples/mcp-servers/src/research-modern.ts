import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { appendLedger } from './ledger.ts';
import { isMain } from './serve.ts';
import { serveModern } from './serve-modern.ts';

/** The 2026-07-28 tasks extension: in the server's capabilities, and in each request's client capabilities. */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const TTL_MS = 10 * 60_000;
const POLL_INTERVAL_MS = 200;

type Status = 'working' | 'completed' | 'cancelled';

interface Research {
  taskId: string;
  status: Status;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult & { resultType: 'complete' };
  timer?: NodeJS.Timeout;
}

/**
 * Tasks belong to the process, not to a server instance: over Streamable HTTP each request gets a
 * fresh instance (2026-07-28 is stateless), and `tasks/get` must find a task another request created.
 */
const tasks = new Map<string, Research>();

const ResearchArgs = z.object({
  topic: z.string().min(1),
  ms: z.int().min(0).max(600_000).default(1_000),
  steps: z.int().min(1).max(100).default(4),
});
const ByTaskId = z.looseObject({ taskId: z.string() });

const TOOLS = [
  {
    name: 'research',
    title: 'Research',
    description:
      'Researches {topic} for ms milliseconds in steps and answers a summary. Runs only as an MCP task (io.modelcontextprotocol/tasks): a call that does not declare the extension is refused.',
    inputSchema: {
      type: 'object' as const,
      properties: {
        topic: { type: 'string', minLength: 1 },
        ms: { type: 'integer', minimum: 0, maximum: 600_000, default: 1_000 },
        steps: { type: 'integer', minimum: 1, maximum: 100, default: 4 },
      },
      required: ['topic'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
];

/**
 * A server that speaks only MCP 2026-07-28 and runs `research` through the tasks extension
 * `io.modelcontextprotocol/tasks`, built on the v2 server SDK's low-level Server (the SDK has no task
 * support of its own on this revision): `tools/call` answers `resultType: "task"`, and `tasks/get` /
 * `tasks/cancel` are the extension's methods. A call that does not declare the extension is refused
 * with -32021 before anything runs. RESEARCH_LEDGER gets one record per task created, finished and
 * cancelled, and per refusal: how tests count how often a task was started.
 */
export function createResearchServer(): Server {
  const ledger = process.env.RESEARCH_LEDGER;
  const server = new Server(
    { name: 'research', version: '0.1.0' },
    { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } },
  );

  server.setRequestHandler('tools/list', () => ({ tools: TOOLS }));

  server.setRequestHandler('tools/call', (request, ctx) => {
    if (request.params.name !== 'research') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    }
    const args = ResearchArgs.safeParse(request.params.arguments ?? {});
    if (!args.success) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid arguments: ${args.error.message}`);
    }
    const { topic, ms, steps } = args.data;
    if (!declaresTasks(ctx)) {
      appendLedger(ledger, { tool: 'research', phase: 'refused', topic });
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        `research runs only as a task: declare the ${TASKS_EXTENSION} extension`,
      );
    }
    const now = new Date().toISOString();
    const task: Research = {
      taskId: randomUUID(),
      status: 'working',
      statusMessage: `step 0 of ${steps}`,
      createdAt: now,
      lastUpdatedAt: now,
    };
    tasks.set(task.taskId, task);
    appendLedger(ledger, { tool: 'research', phase: 'created', taskId: task.taskId, topic });
    let step = 0;
    const next = () => {
      step += 1;
      if (step < steps) {
        update(task, 'working', `step ${step} of ${steps}`);
        task.timer = setTimeout(next, ms / steps);
        return;
      }
      // A complete 2026-07-28 tools/call result, as `tasks/get` carries it.
      task.result = {
        resultType: 'complete',
        content: [{ type: 'text', text: `researched ${topic} in ${steps} steps` }],
        structuredContent: { topic, steps },
      };
      update(task, 'completed', `step ${steps} of ${steps}`);
      appendLedger(ledger, { tool: 'research', phase: 'done', taskId: task.taskId, topic });
    };
    task.timer = setTimeout(next, ms / steps);
    // The extension's CreateTaskResult. The SDK passes a tools/call resultType other than "complete"
    // through unchanged; `content` only satisfies its tools/call result check and is not part of it.
    return { resultType: 'task', content: [], ...wire(task) } as CallToolResult;
  });

  server.setRequestHandler('tasks/get', { params: ByTaskId }, ({ taskId }) => {
    const task = known(taskId);
    return { ...wire(task), ...(task.status === 'completed' ? { result: task.result } : {}) };
  });

  server.setRequestHandler('tasks/cancel', { params: ByTaskId }, ({ taskId }) => {
    const task = known(taskId);
    if (task.status === 'working') {
      clearTimeout(task.timer);
      update(task, 'cancelled', 'cancelled by the client');
      appendLedger(ledger, { tool: 'research', phase: 'cancelled', taskId });
    }
    return {};
  });

  return server;
}

function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function known(taskId: string): Research {
  const task = tasks.get(taskId);
  if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${taskId}`);
  return task;
}

function wire(task: Research) {
  return {
    taskId: task.taskId,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

function update(task: Research, status: Status, statusMessage: string): void {
  task.status = status;
  task.statusMessage = statusMessage;
  task.lastUpdatedAt = new Date().toISOString();
}

if (isMain(import.meta.url)) await serveModern(() => createResearchServer());
