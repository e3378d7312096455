import { findUnsafeJson, WebhookEventsSchema, WebhookUrlSchema } from '@switchyard/contracts';
import { z } from 'zod';
import { ModelSpecSchema } from '../models/model-spec.ts';

/** A job's id in a path: anything else is a 400 before any lookup. */
export const JobIdSchema = z.string().regex(/^job_[0-9a-f-]{36}$/, 'not a job id');

const toolPatterns = z.array(z.string().min(1).max(200)).max(200);

export const JobLimitsSchema = z.strictObject({
  /** Model calls in one agent run. */
  maxSteps: z.int().min(1).max(1000).optional(),
  /** Tool calls over the whole run. */
  maxToolCalls: z.int().min(1).max(10_000).optional(),
  deadlineMs: z
    .int()
    .min(1000)
    .max(24 * 3_600_000)
    .optional()
    .describe(
      "Wall-clock budget of the run, from its first start, kept across resumes. At most the deployment's orchestrator.maxDeadlineMs (24 h unless lowered); a longer one is refused with a 400.",
    ),
});

/** Where to report this job (signed with the team's webhookSecret); events default to the job's end. */
export const JobWebhookSchema = z.strictObject({
  url: WebhookUrlSchema,
  events: WebhookEventsSchema.optional(),
});

const MessageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().min(1).max(200_000),
});

export const AgentJobRequestSchema = z
  .strictObject({
    kind: z.literal('agent'),
    input: z.string().min(1).max(200_000).optional(),
    messages: z.array(MessageSchema).min(1).max(500).optional(),
    model: ModelSpecSchema.optional(),
    tools: z.strictObject({ allow: toolPatterns.optional(), deny: toolPatterns.optional() }).optional(),
    limits: JobLimitsSchema.optional(),
    metadata: z.record(z.string().max(100), z.string().max(1000)).optional(),
    webhook: JobWebhookSchema.optional(),
  })
  .refine((job) => (job.input === undefined) !== (job.messages === undefined), {
    message: 'give exactly one of "input" or "messages"',
    path: ['input'],
  });

export const BatchCallSchema = z.strictObject({
  /** Model-facing name, `<server>__<tool>`. */
  tool: z.string().min(1).max(64),
  arguments: z.record(z.string(), z.unknown()).default({}),
});

export const BatchJobRequestSchema = z.strictObject({
  kind: z.literal('batch'),
  calls: z.array(BatchCallSchema).min(1).max(5_000),
  limits: JobLimitsSchema.pick({ deadlineMs: true }).optional(),
  metadata: z.record(z.string().max(100), z.string().max(1000)).optional(),
  webhook: JobWebhookSchema.optional(),
});

/** Deeper than this, a job request is refused: nobody's tool arguments need it, and it costs stack. */
export const MAX_REQUEST_DEPTH = 64;

export const JobRequestSchema = z
  .discriminatedUnion('kind', [AgentJobRequestSchema, BatchJobRequestSchema])
  .superRefine((request, context) => {
    // Text PostgreSQL cannot store, or nesting past the limit, is the client's mistake: a 400 naming it.
    const problem = findUnsafeJson(request, MAX_REQUEST_DEPTH);
    if (problem) context.addIssue({ code: 'custom', path: problem.path.split('.'), message: problem.reason });
  })
  .meta({ id: 'JobRequest', description: 'An agent job (a model with tools) or a batch of tool calls' });
export type JobRequest = z.infer<typeof JobRequestSchema>;
export type AgentJobRequest = z.infer<typeof AgentJobRequestSchema>;
export type BatchJobRequest = z.infer<typeof BatchJobRequestSchema>;

/**
 * The stored request of a job of kind `mcp`: one `tools/call` received on /mcp (never submitted to
 * POST /v1/jobs, so it is not part of JobRequestSchema). The gateway runs it while the client waits.
 */
export const McpJobRequestSchema = z.strictObject({
  kind: z.literal('mcp'),
  /** Model-facing name, `<server>__<tool>`. */
  tool: z.string().min(1).max(64),
  arguments: z.record(z.string(), z.unknown()),
  /** The MCP protocol revision the client spoke. */
  protocolVersion: z.string().max(50).optional(),
});
export type McpJobRequest = z.infer<typeof McpJobRequestSchema>;
/** A job's request as stored: what POST /v1/jobs accepts, or a gateway call. */
export type StoredJobRequest = JobRequest | McpJobRequest;

/**
 * `input_required`: the run waits for a person (a tool's question, an approval) and holds nothing meanwhile
 * (docs/semantics.md §14–15). `completed_with_errors`: a batch whose calls all ended, not all `ok` (§17).
 */
export const JOB_STATUSES = [
  'queued',
  'running',
  'input_required',
  'succeeded',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<JobStatus> = new Set([
  'succeeded',
  'completed_with_errors',
  'failed',
  'cancelled',
]);
/** How a run ends a job (a cancel is the API's, not the run's). */
export type EndStatus = Extract<JobStatus, 'succeeded' | 'completed_with_errors' | 'failed'>;
