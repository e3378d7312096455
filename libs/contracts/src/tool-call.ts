import { z } from 'zod';
import { SERVER_NAME } from './config.ts';
import { TraceCarrierSchema } from './trace-carrier.ts';

/** The data of one tool-call job on a server's queue. */
export const ToolCallJobSchema = z.object({
  /** The agent or batch job this call belongs to. */
  jobId: z.string().min(1).max(200),
  /** The model's tool call id (or the batch position); unique within the job. */
  toolCallId: z.string().min(1).max(200),
  server: z.string().regex(SERVER_NAME),
  /** The tool's name on its MCP server (not the model-facing `<server>__<tool>` name). */
  tool: z.string().min(1).max(256),
  arguments: z.record(z.string(), z.unknown()),
  /** Epoch ms. A call not started by then is dropped as `expired`; it never runs late. */
  deadline: z.number().int().positive(),
  /** Epoch ms when the call was enqueued; queue-wait is measured from here. */
  enqueuedAt: z.number().int().positive(),
  /** Decided by the producer from the config and catalog; the worker re-derives it and takes the stricter. */
  idempotent: z.boolean(),
  trace: TraceCarrierSchema.default({}),
  /** Free-form labels for logs (team, agent step, ...). */
  labels: z.record(z.string(), z.string()).default({}),
});
export type ToolCallJob = z.infer<typeof ToolCallJobSchema>;
export type ToolCallJobInput = z.input<typeof ToolCallJobSchema>;

/** A request, published on redisKeys.cancels, to cancel a tool-call job a worker is running. */
export const ToolCallCancelSchema = z.object({
  /** The BullMQ queue name (toolQueueName) and job id of the call. */
  queue: z.string().min(1),
  id: z.string().min(1),
  reason: z.string().max(500).default('cancelled'),
});
export type ToolCallCancel = z.infer<typeof ToolCallCancelSchema>;
