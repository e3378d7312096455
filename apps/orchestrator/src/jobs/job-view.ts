import { modelText, OUTCOME_STATUSES, ToolCallOutcomeSchema, toolMessageText } from '@switchyard/contracts';
import { z } from 'zod';
import type { TranscriptMessage } from '../checkpoints/transcript-reader.ts';
import type { InputRecord } from './input-store.ts';
import { JOB_STATUSES, JobRequestSchema, McpJobRequestSchema } from './job-request.ts';
import type { JobRecord, ToolCallRecord } from './job-store.ts';
import {
  AttemptViewSchema,
  attemptViews,
  ToolCallStateSchema,
  toolCallState,
  WaitViewSchema,
  waitsByCall,
} from './tool-call-timing.ts';

/** Every timestamp the API returns: ISO 8601 in UTC, never epoch milliseconds. */
export const Timestamp = z.iso.datetime().meta({ example: '2026-12-01T01:30:00.000Z' });
const iso = (date: Date | number): string => new Date(date).toISOString();
const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);

export const JobStatusSchema = z.enum(JOB_STATUSES).meta({
  id: 'JobStatus',
  description:
    'queued → running (⇄ input_required while a call waits for a person) → succeeded | completed_with_errors (a batch with a call that did not end ok) | failed | cancelled',
});

/** A stored outcome as the API shows it: the same fields, with ISO timestamps. */
export const ToolCallOutcomeViewSchema = ToolCallOutcomeSchema.in
  .omit({ attemptLog: true }) // shown as the call's `attempts`, with ISO times
  .extend({
    text: z.string().optional().meta({
      description:
        "What the model was told, when the content does not say it (failures, messages). Absent: it is the content's text blocks joined by newlines (other blocks as `[<type> content]`), else the JSON of structuredContent, else empty — so a result is sent once; @switchyard/client fills it in",
    }),
    finishedAt: Timestamp,
    startedAt: Timestamp.optional().meta({ description: 'When the worker sent the request to the server' }),
  })
  .meta({ id: 'ToolCallOutcome' });

export const ToolCallViewSchema = z
  .object({
    id: z.string(),
    tool: z.string().meta({ description: 'The model-facing name, <server>__<tool>' }),
    server: z.string().nullable(),
    serverTool: z.string().nullable(),
    arguments: z.record(z.string(), z.unknown()),
    state: ToolCallStateSchema,
    status: z.string().meta({
      description:
        'The same as `state` (kept for clients written before it; older servers said `dispatched` for every call without an outcome)',
    }),
    workerId: z.string().nullable().meta({ description: 'The worker that settled the call' }),
    dispatchedAt: Timestamp.meta({ description: 'When the orchestrator put the call on its server queue' }),
    startedAt: Timestamp.nullable().meta({ description: 'When a worker sent it to the MCP server' }),
    finishedAt: Timestamp.nullable(),
    outcome: ToolCallOutcomeViewSchema.nullable(),
    attempts: z.array(AttemptViewSchema).meta({
      description:
        'What the workers did, oldest first (empty until the call has its outcome, or when no worker took it)',
    }),
    waits: z
      .array(WaitViewSchema)
      .meta({ description: 'Approvals and questions the call waited for a person on' }),
  })
  .meta({ id: 'ToolCall' });

export const BatchSummarySchema = z
  .object({
    calls: z.int(),
    pending: z.int().meta({ description: 'Calls without an outcome yet' }),
    byStatus: z.partialRecord(z.enum(OUTCOME_STATUSES), z.int()),
  })
  .meta({ id: 'BatchSummary', description: 'Counts of the batch calls by outcome status' });

/** The one role vocabulary, in requests and in transcripts. */
export const MessageRoleSchema = z.enum(['system', 'user', 'assistant', 'tool']).meta({ id: 'MessageRole' });

export const TranscriptMessageSchema = z
  .object({
    role: MessageRoleSchema,
    content: z.string().optional().meta({
      description:
        'Absent on a tool message whose text is its call’s outcome as the model read it (the outcome text, prefixed `[<status>] ` unless `ok`): the result is sent once, in `toolCalls`; @switchyard/client fills it in',
    }),
    toolCalls: z
      .array(
        z.object({ id: z.string().optional(), name: z.string(), args: z.record(z.string(), z.unknown()) }),
      )
      .optional(),
    toolCallId: z.string().optional(),
    status: z.string().optional(),
  })
  .meta({ id: 'Message' });

/** A question a call asked, or an approval it needs, and (once decided) the answer and who gave it. */
export const InputViewSchema = z
  .looseObject({
    kind: z.enum(['approval', 'question']),
    toolCallId: z.string(),
    server: z.string(),
    tool: z.string(),
    question: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'Questions: message, mode (form | url), requested schema or URL' }),
    arguments: z.record(z.string(), z.unknown()).optional().meta({ description: 'Approvals' }),
    digest: z.string().optional().meta({ description: 'Approvals: sha256 of the canonical arguments' }),
    askedAt: Timestamp,
    expiresAt: Timestamp,
    state: z.enum(['pending', 'answered', 'expired']),
    answer: z.record(z.string(), z.unknown()).optional(),
    decidedBy: z.string().optional(),
    decidedAt: Timestamp.optional(),
  })
  .meta({ id: 'PendingInput' });

/** The fields a job shows in a list: what it is, how it stands, what it was tagged with. */
const jobSummaryFields = {
  id: z.string().meta({ example: 'job_0b7c6a52-6f2e-4d1a-9a51-1f1f6c2a9e10' }),
  kind: z.enum(['agent', 'batch', 'mcp']).meta({ description: '`mcp`: one tools/call through /mcp' }),
  team: z.string().meta({ description: 'The team that submitted it (an operator lists every team)' }),
  status: JobStatusSchema,
  metadata: z.record(z.string(), z.string()),
  error: z.string().nullable(),
  traceId: z.string(),
  traceUrl: z.string().optional().meta({ description: 'Set when the deployment has JAEGER_UI_URL' }),
  createdAt: Timestamp,
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
};

export const JobSummarySchema = z.object(jobSummaryFields).meta({ id: 'JobSummary' });
export type JobSummary = z.output<typeof JobSummarySchema>;

export const JobViewSchema = z
  .object({
    ...jobSummaryFields,
    request: z.union([JobRequestSchema, McpJobRequestSchema]).meta({
      description: 'What was submitted (an agent job: with the model it runs on; an mcp job: the tools/call)',
    }),
    result: z.unknown().meta({ description: 'An agent job: the answer. A batch: counts of its outcomes' }),
    summary: BatchSummarySchema.optional().meta({ description: 'Batches only' }),
    toolCalls: z.array(ToolCallViewSchema),
    messages: z
      .array(TranscriptMessageSchema)
      .optional()
      .meta({ description: 'Agent jobs: the conversation' }),
    pendingInputs: z
      .array(InputViewSchema)
      .meta({ description: 'Questions and approvals the calls wait for (docs/semantics.md §14–15)' }),
    audit: z.array(InputViewSchema).meta({ description: 'Answers and decisions: what, when, which key' }),
  })
  .meta({ id: 'Job' });
export type JobView = z.output<typeof JobViewSchema>;

export function jobSummary(job: JobRecord, jaegerUiUrl?: string): JobSummary {
  return {
    id: job.id,
    kind: job.kind,
    team: job.team,
    status: job.status,
    metadata: (job.request.kind === 'mcp' ? undefined : job.request.metadata) ?? {},
    error: job.error,
    traceId: job.traceId,
    ...(jaegerUiUrl ? { traceUrl: `${jaegerUiUrl.replace(/\/$/, '')}/trace/${job.traceId}` } : {}),
    createdAt: iso(job.createdAt),
    startedAt: isoOrNull(job.startedAt),
    finishedAt: isoOrNull(job.finishedAt),
  };
}

/** What `GET /v1/jobs/:id` returns. */
export function jobView(
  job: JobRecord,
  toolCalls: ToolCallRecord[],
  messages: TranscriptMessage[] | undefined,
  jaegerUiUrl?: string,
  inputs: InputRecord[] = [],
): JobView {
  const waits = waitsByCall(inputs);
  return {
    ...jobSummary(job, jaegerUiUrl),
    request: job.request,
    result: job.result ?? null,
    ...(job.kind === 'batch' ? { summary: batchSummary(job, toolCalls) } : {}),
    toolCalls: toolCalls.map((call) => toolCallView(call, waits.get(call.toolCallId) ?? [])),
    ...(messages ? { messages: transcriptView(messages, toolCalls) } : {}),
    pendingInputs: inputs.filter((input) => input.state === 'pending').map(inputView),
    audit: inputs.filter((input) => input.state !== 'pending').map(inputView),
  };
}

function inputView(input: InputRecord): z.output<typeof InputViewSchema> {
  return {
    kind: input.kind,
    toolCallId: input.toolCallId,
    server: input.server,
    tool: input.tool,
    ...(input.kind === 'approval'
      ? (input.request as unknown as Record<string, unknown>)
      : { question: input.request as unknown as Record<string, unknown> }),
    askedAt: iso(input.createdAt),
    expiresAt: iso(input.expiresAt),
    state: input.state,
    ...(input.answer ? { answer: input.answer as unknown as Record<string, unknown> } : {}),
    ...(input.decidedBy ? { decidedBy: input.decidedBy } : {}),
    ...(input.decidedAt ? { decidedAt: iso(input.decidedAt) } : {}),
  };
}

function toolCallView(
  call: ToolCallRecord,
  waits: z.output<typeof WaitViewSchema>[],
): z.output<typeof ToolCallViewSchema> {
  const outcome = call.outcome;
  const state = toolCallState(call, waits);
  return {
    id: call.toolCallId,
    tool: call.modelTool,
    server: call.server,
    serverTool: call.tool,
    arguments: call.arguments,
    state,
    status: state,
    workerId: outcome?.workerId ?? null,
    // The queue job is added when the call is recorded; the worker's clock says when it sent it.
    dispatchedAt: iso(call.dispatchedAt),
    startedAt: outcome?.startedAt ? iso(outcome.startedAt) : null,
    finishedAt: isoOrNull(call.finishedAt),
    outcome: outcome
      ? (() => {
          const { startedAt, finishedAt, attemptLog: _log, text, ...rest } = outcome;
          // The text once: left out when the content yields it (as it is stored), else a 256 KiB
          // result would be sent twice.
          const derived = text === modelText(rest.content, rest.structuredContent);
          return {
            ...rest,
            ...(derived ? {} : { text }),
            finishedAt: iso(finishedAt),
            ...(startedAt ? { startedAt: iso(startedAt) } : {}),
          };
        })()
      : null,
    attempts: attemptViews(outcome),
    waits,
  };
}

function batchSummary(job: JobRecord, toolCalls: ToolCallRecord[]): z.output<typeof BatchSummarySchema> {
  const calls = job.request.kind === 'batch' ? job.request.calls.length : toolCalls.length;
  const byStatus: Partial<Record<(typeof OUTCOME_STATUSES)[number], number>> = {};
  let settled = 0;
  for (const call of toolCalls) {
    if (!call.outcome) continue;
    settled += 1;
    byStatus[call.outcome.status] = (byStatus[call.outcome.status] ?? 0) + 1;
  }
  return { calls, pending: calls - settled, byStatus };
}

/** LangChain's message types, in the API's role vocabulary (the one requests use). */
const ROLE_OF_TYPE: Record<string, z.output<typeof MessageRoleSchema>> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
};

/**
 * The conversation, each tool result sent once: a tool message that says exactly what its call's
 * outcome says (as toolMessageText words it) leaves its content out; one that differs — a message
 * from before a re-run, a call the model named differently — keeps it.
 */
function transcriptView(
  messages: TranscriptMessage[],
  toolCalls: ToolCallRecord[],
): z.output<typeof TranscriptMessageSchema>[] {
  const told = new Map(
    toolCalls.flatMap((call) =>
      call.outcome ? [[call.toolCallId, toolMessageText(call.outcome)] as const] : [],
    ),
  );
  return messages.map((message) => {
    const role = ROLE_OF_TYPE[message.role] ?? 'assistant';
    if (role === 'tool' && message.toolCallId && told.get(message.toolCallId) === message.content) {
      const { content: _sentInToolCalls, ...rest } = message;
      return { ...rest, role };
    }
    return { ...message, role };
  });
}
