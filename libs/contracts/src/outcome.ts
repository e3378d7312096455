import { z } from 'zod';

export const OUTCOME_STATUSES = [
  'ok',
  'tool_error',
  'invalid_arguments',
  'unavailable',
  'expired',
  'timeout',
  'indeterminate',
  'failed',
  'cancelled',
] as const;
export const OutcomeStatusSchema = z.enum(OUTCOME_STATUSES);
export type OutcomeStatus = z.infer<typeof OutcomeStatusSchema>;

/** Whether the server executed the call: `unknown` when the call may or may not have run. */
export const ExecutedSchema = z.enum(['yes', 'no', 'unknown']);
export type Executed = z.infer<typeof ExecutedSchema>;

/** MCP content blocks are passed through as the server sent them (after the size cap). */
export const ContentBlockSchema = z.looseObject({ type: z.string() });

export const ToolCallOutcomeSchema = z.object({
  status: OutcomeStatusSchema,
  executed: ExecutedSchema,
  /** Attempts that reached the server (0 when never sent). */
  attempts: z.int().min(0),
  server: z.string(),
  tool: z.string(),
  jobId: z.string(),
  toolCallId: z.string(),
  /** The worker that settled the call; absent when no worker took it (e.g. `unavailable`). */
  workerId: z.string().optional(),
  queuedMs: z.number().min(0),
  runMs: z.number().min(0),
  traceId: z.string().optional(),
  /** What the model is told. Always present, also for failures. */
  text: z.string(),
  content: z.array(ContentBlockSchema).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  /** Set when content or structuredContent was cut to the server's maxResultBytes. */
  truncated: z.boolean().default(false),
  /** Machine-readable detail for failures: the error class, code or reason. */
  error: z.string().optional(),
  finishedAt: z.number().int().positive(),
});
export type ToolCallOutcome = z.infer<typeof ToolCallOutcomeSchema>;
export type ToolCallOutcomeInput = z.input<typeof ToolCallOutcomeSchema>;

/** What `executed` each status implies when nothing more specific is known. */
export const EXECUTED_BY_STATUS: Record<OutcomeStatus, Executed> = {
  ok: 'yes',
  tool_error: 'yes',
  invalid_arguments: 'no',
  unavailable: 'no',
  expired: 'no',
  timeout: 'unknown',
  indeterminate: 'unknown',
  failed: 'unknown',
  cancelled: 'no',
};
