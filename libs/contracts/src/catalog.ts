import { z } from 'zod';

export const ToolAnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
export type ToolAnnotations = z.infer<typeof ToolAnnotationsSchema>;

export const CatalogToolSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: ToolAnnotationsSchema.optional(),
});
export type CatalogTool = z.infer<typeof CatalogToolSchema>;

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
  lastError: z.string().optional(),
  /** The stdio child's pid, for diagnostics. */
  pid: z.int().optional(),
});
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export const WorkerHeartbeatSchema = z.object({
  workerId: z.string(),
  host: z.string(),
  pid: z.int(),
  startedAt: z.number(),
  beatAt: z.number(),
  /** After this the worker counts as gone, whatever its sessions said. */
  expiresAt: z.number(),
  sessions: z.record(z.string(), SessionStatusSchema),
});
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeatSchema>;
