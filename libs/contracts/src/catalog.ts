import { z } from 'zod';

export const ToolAnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type ToolAnnotations = z.infer<typeof ToolAnnotationsSchema>;

/**
 * How a tool may run (MCP `Tool.execution`): `taskSupport` `required` means the server refuses the
 * tool unless it is called as a task, `optional` that it may be. Loose: later keys are kept.
 */
export const ToolExecutionSchema = z.looseObject({
  taskSupport: z.string().optional(),
});
export type ToolExecution = z.infer<typeof ToolExecutionSchema>;

export const CatalogToolSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: ToolAnnotationsSchema.optional(),
  execution: ToolExecutionSchema.optional(),
});
export type CatalogTool = z.infer<typeof CatalogToolSchema>;

/**
 * A tool its server runs only as an MCP task (`execution.taskSupport: "required"`): sent as an ordinary
 * call, the server refuses it before it runs.
 */
export function requiresTask(tool: Pick<CatalogTool, 'execution'>): boolean {
  return tool.execution?.taskSupport === 'required';
}

/** One server's `tools/list`, as the last worker that listed it saw it. */
export const ServerCatalogEntrySchema = z.object({
  server: z.string(),
  tools: z.array(CatalogToolSchema),
  serverInfo: z.object({ name: z.string(), version: z.string() }).optional(),
  publishedBy: z.string(),
  updatedAt: z.number(),
});
export type ServerCatalogEntry = z.infer<typeof ServerCatalogEntrySchema>;

export const SESSION_STATES = ['connecting', 'ready', 'degraded', 'reconnecting', 'closed'] as const;
export const SessionStateSchema = z.enum(SESSION_STATES);
export type SessionState = z.infer<typeof SessionStateSchema>;

export const SessionStatusSchema = z.object({
  state: SessionStateSchema,
  since: z.number(),
  /** Connects since the worker started; more than one means the server was reconnected. */
  connects: z.int().min(0),
  /** Why the session last failed, in words any team may read: never the server's stderr. */
  lastError: z.string().optional(),
  /**
   * The last lines a stdio server wrote to stderr when it failed. Operators only (`GET /v1/servers`
   * with an operator key): it may echo another team's arguments or secrets.
   */
  stderrTail: z.string().optional(),
  /** The stdio child's pid, for diagnostics. */
  pid: z.int().optional(),
  /** The MCP revision the session negotiated (e.g. 2026-07-28, 2025-11-25), once connected. */
  protocolVersion: z.string().optional(),
});
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export const WorkerHeartbeatSchema = z.object({
  workerId: z.string(),
  host: z.string(),
  pid: z.int(),
  /** Port of the worker's /metrics and /health (WORKER_HTTP_PORT, or the one picked for 0). */
  httpPort: z.int().optional(),
  startedAt: z.number(),
  beatAt: z.number(),
  /** After this the worker counts as gone, whatever its sessions said. */
  expiresAt: z.number(),
  sessions: z.record(z.string(), SessionStatusSchema),
});
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeatSchema>;
