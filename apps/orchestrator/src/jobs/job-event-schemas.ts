import { OUTCOME_STATUSES } from '@switchyard/contracts';
import { z } from 'zod';
import { JOB_STATUSES } from './job-request.ts';

/**
 * The `data` of each server-sent event of `GET /v1/jobs/:id/events`, by event name, for clients that
 * follow a job (OpenAPI 3.1 cannot describe an event stream's items; these are its components).
 * Every event carries `at`, when it was stored (ISO 8601).
 */
const at = z.iso.datetime();

export const JOB_EVENT_SCHEMAS = {
  status: z
    .looseObject({
      status: z.enum(JOB_STATUSES),
      replica: z.string().optional(),
      error: z.string().optional(),
      at,
    })
    .meta({ id: 'JobStatusEvent', description: 'event: status — the job moved to this status' }),
  step: z
    .looseObject({ step: z.int().min(1), at })
    .meta({ id: 'JobStepEvent', description: 'event: step — a model step began' }),
  message: z
    .looseObject({ role: z.enum(['assistant']), content: z.string(), at })
    .meta({ id: 'JobMessageEvent', description: "event: message — the model's answer" }),
  'tool_call.dispatched': z
    .looseObject({ id: z.string(), tool: z.string(), server: z.string().optional(), at })
    .meta({
      id: 'ToolCallDispatchedEvent',
      description: 'event: tool_call.dispatched — the call was put on its queue',
    }),
  'tool_call.finished': z
    .looseObject({
      id: z.string(),
      tool: z.string(),
      server: z.string().optional(),
      status: z.enum(OUTCOME_STATUSES),
      executed: z.enum(['yes', 'no', 'unknown']),
      attempts: z.int().min(0),
      queuedMs: z.number().min(0),
      runMs: z.number().min(0),
      workerId: z.string().optional(),
      startedAt: z.iso.datetime().optional(),
      finishedAt: z.iso.datetime(),
      at,
    })
    .meta({
      id: 'ToolCallFinishedEvent',
      description: 'event: tool_call.finished — the call has its one outcome',
    }),
  'tool_call.progress': z
    .looseObject({
      toolCallId: z.string(),
      server: z.string(),
      tool: z.string(),
      progress: z.number(),
      total: z.number().optional(),
      message: z.string().max(2_000).optional(),
      at,
    })
    .meta({
      id: 'ToolCallProgressEvent',
      description:
        "event: tool_call.progress — the running call's server reported progress (at most one per call per 500 ms; only the newest per call is replayed)",
    }),
} as const;
