import { z } from 'zod';

/**
 * One MCP progress notification of a running tool call, published by the worker on
 * redisKeys.progress so the orchestrator replica waiting for the call can record and forward it.
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
