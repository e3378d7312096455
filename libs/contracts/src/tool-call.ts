import { z } from 'zod';
import { SERVER_NAME, TEAM_NAME } from './config.ts';
import { AnswerSchema } from './question.ts';
import { LogLevelSchema } from './tool-call-progress.ts';
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
  /** The team the call is made for: the worker sends the server this team's credential (servers.*.auth). */
  team: z.string().regex(TEAM_NAME).optional(),
  /** Free-form labels for logs (team, agent step, ...). */
  labels: z.record(z.string(), z.string()).default({}),
  /**
   * A person's answer to the question the previous round of this call asked (docs/semantics.md §14):
   * the worker hands it to the server's elicitation, or sends it as `inputResponses` (2026-07-28).
   * Absent: a question is answered `cancel` and the call ends `input_required`.
   */
  answer: AnswerSchema.optional(),
  /**
   * The least severe MCP log level the caller wants relayed (a /mcp client's `logging/setLevel` or
   * per-request level, docs/semantics.md §16): the worker relays the server's `notifications/message`
   * at or above it. Absent: no log message of the call leaves the worker.
   */
  logLevel: LogLevelSchema.optional(),
});
export type ToolCallJob = z.infer<typeof ToolCallJobSchema>;
export type ToolCallJobInput = z.input<typeof ToolCallJobSchema>;

/** A request, published on redisKeys.cancels, to cancel a tool-call job a worker is running. */
export const ToolCallCancelSchema = z
  .object({
    /** The BullMQ queue name (toolQueueName) and job id of the call. */
    queue: z.string().min(1),
    id: z.string().min(1).optional(),
    /**
     * Every call of one job on this queue, in one message: a worker that aborts the running one has
     * already heard of the others when BullMQ hands it the next, so that one is refused before it is sent.
     */
    ids: z.array(z.string().min(1)).max(10_000).optional(),
    reason: z.string().max(500).default('cancelled'),
  })
  .refine((request) => request.id !== undefined || (request.ids?.length ?? 0) > 0, {
    message: 'a cancel names a call (id) or calls (ids)',
  });
export type ToolCallCancel = z.infer<typeof ToolCallCancelSchema>;
