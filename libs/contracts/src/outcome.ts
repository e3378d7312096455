import { z } from 'zod';
import { QuestionSchema } from './question.ts';

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
  /** The tool asked a person a question (elicitation); the answered retry is a new, linked call. */
  'input_required',
  /** A person denied the approval the call needed; never sent. */
  'denied',
] as const;
export const OutcomeStatusSchema = z.enum(OUTCOME_STATUSES);
export type OutcomeStatus = z.infer<typeof OutcomeStatusSchema>;

/** Whether the server executed the call: `unknown` when the call may or may not have run. */
export const ExecutedSchema = z.enum(['yes', 'no', 'unknown']);
export type Executed = z.infer<typeof ExecutedSchema>;

/** MCP content blocks are passed through as the server sent them (after the size cap). */
export const ContentBlockSchema = z.looseObject({ type: z.string() });

/**
 * One attempt of a call as its worker saw it (docs/semantics.md §5): when a worker took it, when the
 * request went to the server (absent: never sent), when the attempt ended and, for one that failed and
 * was retried, the short reason. Times are epoch ms; a retried call lists every attempt, so its queue
 * wait, its attempts and the backoff between them are not drawn as one wait.
 */
export const AttemptRecordSchema = z.object({
  attempt: z.int().min(1),
  workerId: z.string().optional(),
  pickedUpAt: z.number().int().positive(),
  startedAt: z.number().int().positive().optional(),
  finishedAt: z.number().int().positive(),
  error: z.string().optional(),
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

const ToolCallOutcomeFields = z.object({
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
  /**
   * The per-attempt timeout of the call's last attempt (static `timeoutMs` or the adaptive value);
   * absent when no attempt was sent.
   */
  timeoutMs: z.int().min(1).optional(),
  traceId: z.string().optional(),
  /**
   * What the model is told. Stored only when it cannot be derived from `content` and
   * `structuredContent` (failures, messages), so a result's text is never stored twice; parsing
   * always fills it in.
   */
  text: z.string().optional(),
  content: z.array(ContentBlockSchema).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  /** Set when content or structuredContent was cut to the server's maxResultBytes; a marker block says what. */
  truncated: z.boolean().default(false),
  /** Machine-readable detail for failures: the error class, code or reason. */
  error: z.string().optional(),
  /** `input_required`: what the tool asked (docs/semantics.md §14). */
  question: QuestionSchema.optional(),
  finishedAt: z.number().int().positive(),
  /** When the worker sent the request to the server (epoch ms); absent when it never sent it. */
  startedAt: z.number().int().positive().optional(),
  /** Every attempt a worker made, oldest first (absent for outcomes decided without a worker). */
  attemptLog: z.array(AttemptRecordSchema).optional(),
});

/** An outcome as read by its consumers: `text` is always there (derived from the content when not stored). */
export const ToolCallOutcomeSchema = ToolCallOutcomeFields.transform((outcome) => ({
  ...outcome,
  text: outcome.text ?? modelText(outcome.content, outcome.structuredContent),
}));
export type ToolCallOutcome = z.output<typeof ToolCallOutcomeSchema>;
/** An outcome as stored (job return value, outcome stream, database): `text` only when not derivable. */
export type ToolCallOutcomeInput = z.input<typeof ToolCallOutcomeSchema>;
export type StoredToolCallOutcome = ToolCallOutcomeInput;

type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** What the model reads of a result: the text blocks, else the structured content, else nothing. */
export function modelText(content: ContentBlock[], structuredContent?: Record<string, unknown>): string {
  const texts = content.map((block) =>
    block.type === 'text' && typeof block.text === 'string' ? block.text : `[${block.type} content]`,
  );
  if (texts.length > 0) return texts.join('\n');
  if (structuredContent) return JSON.stringify(structuredContent);
  return '';
}

/**
 * What an agent's model reads of an outcome in its tool message: the result's text when it is `ok`,
 * else the text prefixed with its status, so the model can tell a failure from a result and act on it.
 */
export function toolMessageText(outcome: Pick<ToolCallOutcome, 'status' | 'text'>): string {
  return outcome.status === 'ok' ? outcome.text : `[${outcome.status}] ${outcome.text}`;
}

/** The form to store: drops `text` when the content yields the same text, so it is not stored twice. */
export function storedOutcome(outcome: ToolCallOutcomeInput): StoredToolCallOutcome {
  const { text, ...rest } = outcome;
  if (text === undefined || text === modelText(rest.content ?? [], rest.structuredContent)) return rest;
  return outcome;
}

/**
 * The most a stored outcome adds to its capped result: ids and names (bounded by the job schema),
 * timings, the error detail and the message quoting it (each cut to OUTCOME_DETAIL_BYTES of JSON) and
 * the truncation marker. A stored outcome's JSON is at most the server's maxResultBytes plus this.
 */
export const OUTCOME_ENVELOPE_BYTES = 16 * 1024;
/** Most JSON bytes of server-provided detail (an error message) an outcome's `error` or `text` quotes. */
export const OUTCOME_DETAIL_BYTES = 1024;

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
  // As reported: on 2026-07-28 the server stopped to ask; on older revisions it ran up to its question.
  input_required: 'unknown',
  denied: 'no',
};
