import { findUnsafeJson } from '@switchyard/contracts';
import { z } from 'zod';
import { ModelSpecSchema } from '../models/model-spec.ts';

const toolPatterns = z.array(z.string().min(1).max(200)).max(200);

export const JobLimitsSchema = z.strictObject({
  /** Model calls in one agent run. */
  maxSteps: z.int().min(1).max(1000).optional(),
  /** Tool calls over the whole run. */
  maxToolCalls: z.int().min(1).max(10_000).optional(),
  /** Wall-clock budget of the run, from when it starts. */
  deadlineMs: z
    .int()
    .min(1000)
    .max(24 * 3_600_000)
    .optional(),
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
});

/** Deeper than this, a job request is refused: nobody's tool arguments need it, and it costs stack. */
export const MAX_REQUEST_DEPTH = 64;

export const JobRequestSchema = z
  .discriminatedUnion('kind', [AgentJobRequestSchema, BatchJobRequestSchema])
  .superRefine((request, context) => {
    // Text PostgreSQL cannot store, or nesting past the limit, is the client's mistake: a 400 naming it.
    const problem = findUnsafeJson(request, MAX_REQUEST_DEPTH);
    if (problem) context.addIssue({ code: 'custom', path: problem.path.split('.'), message: problem.reason });
  });
export type JobRequest = z.infer<typeof JobRequestSchema>;
export type AgentJobRequest = z.infer<typeof AgentJobRequestSchema>;
export type BatchJobRequest = z.infer<typeof BatchJobRequestSchema>;

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);
