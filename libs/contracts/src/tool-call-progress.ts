import { z } from 'zod';

/**
 * The label a producer sets on a tool-call job whose MCP progress notifications someone waits for
 * (the /mcp gateway): only then does the worker relay them, so agent and batch calls cost nothing.
 */
export const RELAY_PROGRESS_LABEL = 'relayProgress';

/**
 * One MCP progress notification of a running tool call, published by the worker on
 * redisKeys.progress so the orchestrator replica holding the client's stream can forward it.
 */
export const ToolCallProgressSchema = z.object({
  /** The BullMQ queue name (toolQueueName) and job id of the call. */
  queue: z.string().min(1),
  id: z.string().min(1),
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().max(2_000).optional(),
});
export type ToolCallProgress = z.infer<typeof ToolCallProgressSchema>;
