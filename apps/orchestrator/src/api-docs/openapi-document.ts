import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { ViewerSchema } from '../auth/viewer-schema.ts';
import { ToolListSchema } from '../catalog/tool-list-schema.ts';
import { ServerListSchema } from '../dispatch/server-list-schema.ts';
import { PROBLEM_CONTENT_TYPE, ProblemSchema } from '../http/problem.ts';
import { ApprovalDecisionSchema, CallIdSchema, InputAnswerSchema } from '../inputs/input-requests.ts';
import { JOB_EVENT_SCHEMAS } from '../jobs/job-event-schemas.ts';
import { JobListQuerySchema, JobListSchema } from '../jobs/job-list-query.ts';
import { JobIdSchema, JobRequestSchema } from '../jobs/job-request.ts';
import { JobViewSchema } from '../jobs/job-view.ts';
import { IdempotencyKeySchema } from '../jobs/jobs.controller.ts';
import { ModelChoicesSchema } from '../models/model-choices-schema.ts';
import { WebhookDeliveryListSchema } from '../webhooks/webhook-delivery-view.ts';

/** The answer of every error: one problem+json per status an operation may return. */
const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (`validation-failed`, `malformed-body`, `unknown-tools`, `invalid-cursor`)',
  401: 'Missing or unknown API key (`unauthorized`)',
  403: "An operator key, which only reads: acting on a job takes the team's own key (`forbidden`)",
  404: "No such job for this team; another team's job is a 404 too (`not-found`)",
  409: 'The job is not in a state that allows this (`conflict`)',
  413: 'Body larger than orchestrator.maxRequestBytes (`payload-too-large`)',
  415: 'The body is not application/json (`unsupported-media-type`)',
  422: 'The Idempotency-Key was used with a different body (`idempotency-key-reused`)',
  429: 'A team limit is reached; see Retry-After (`too-many-requests`)',
  503: 'PostgreSQL or Redis is unavailable; see Retry-After (`dependency-unavailable`)',
};

function problems(...statuses: number[]): ZodOpenApiResponsesObject {
  return Object.fromEntries(
    [...statuses, 500].map((status) => [
      String(status),
      {
        description: PROBLEM_DESCRIPTIONS[status] ?? 'Internal error (`internal-error`)',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
      },
    ]),
  );
}

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const jobPath = {
  path: z.object({ id: JobIdSchema.meta({ example: 'job_0b7c6a52-6f2e-4d1a-9a51-1f1f6c2a9e10' }) }),
};

const EXAMPLE_BATCH = {
  kind: 'batch',
  calls: [
    { tool: 'search__search', arguments: { query: 'switchyard' } },
    { tool: 'notes__add_note', arguments: { text: 'found it' } },
  ],
  metadata: { ticket: 'OPS-42' },
};
const EXAMPLE_AGENT = {
  kind: 'agent',
  input: 'Find the release notes and summarise them',
  model: { provider: 'openai', name: 'gpt-4.1-mini' },
  tools: { allow: ['search__*'] },
  limits: { maxSteps: 10 },
};

const operations = {
  listJobs: {
    operationId: 'listJobs',
    tags: ['jobs'],
    summary: "The team's jobs, newest first (an operator key: every team's)",
    description:
      "A team key lists its own jobs; an operator key every team's, read-only, with `team` to narrow them to one. Filters combine with AND. `metadata[<key>]=<value>` (or `metadata.<key>=<value>`) keeps jobs submitted with that metadata. Pages follow `nextCursor`; send the same filters with it. An unknown parameter, a bad value or a cursor this API did not issue is a 400; a team key naming another team in `team` is a 403.",
    requestParams: { query: JobListQuerySchema },
    parameters: [
      {
        name: 'metadata',
        in: 'query',
        style: 'deepObject',
        explode: true,
        required: false,
        description: 'metadata[<key>]=<value>: only jobs whose metadata has that key with that value',
        schema: { type: 'object', additionalProperties: { type: 'string' } },
      },
    ],
    responses: { '200': json(JobListSchema, 'One page of jobs'), ...problems(400, 401, 403, 503) },
  },
  submitJob: {
    operationId: 'submitJob',
    tags: ['jobs'],
    summary: 'Submit an agent job or a batch of tool calls',
    requestParams: {
      header: z.object({
        'Idempotency-Key': IdempotencyKeySchema.meta({
          description:
            'Same key and same body from the same team: the same job (200). Same key, another body: 422',
        }),
      }),
    },
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: JobRequestSchema,
          examples: { batch: { value: EXAMPLE_BATCH }, agent: { value: EXAMPLE_AGENT } },
        },
      },
    },
    responses: {
      '201': json(JobViewSchema, 'The job, queued'),
      '200': json(JobViewSchema, 'The job submitted earlier with this Idempotency-Key and this body'),
      ...problems(400, 401, 403, 413, 415, 422, 429, 503),
    },
  },
  getJob: {
    operationId: 'getJob',
    tags: ['jobs'],
    summary: 'A job: what was submitted, its status, result, tool calls and (agent jobs) messages',
    description: "A team key reads its own jobs (another team's is a 404); an operator key any job.",
    requestParams: jobPath,
    responses: { '200': json(JobViewSchema, 'The job'), ...problems(400, 401, 404, 503) },
  },
  deleteJob: {
    operationId: 'deleteJob',
    tags: ['jobs'],
    summary: 'Delete an ended job with its tool calls, events and checkpoints',
    description: 'A job still queued or running is a 409: cancel it first.',
    requestParams: jobPath,
    responses: { '204': { description: 'Deleted' }, ...problems(400, 401, 403, 404, 409, 503) },
  },
  cancelJob: {
    operationId: 'cancelJob',
    tags: ['jobs'],
    summary: 'Cancel a queued or running job',
    requestParams: jobPath,
    responses: {
      '200': json(JobViewSchema, 'The job, cancelled'),
      ...problems(400, 401, 403, 404, 409, 503),
    },
  },
  streamJobEvents: {
    operationId: 'streamJobEvents',
    tags: ['jobs'],
    summary: "The job's events as server-sent events, until its final status",
    description:
      'Events, each with an id (reconnect with Last-Event-ID to resume after it) and JSON data described by a component schema: `status` (JobStatusEvent), `step` (JobStepEvent), `message` (JobMessageEvent), `tool_call.dispatched` (ToolCallDispatchedEvent), `tool_call.finished` (ToolCallFinishedEvent). The stream ends after the final status.',
    requestParams: {
      ...jobPath,
      header: z.object({
        'Last-Event-ID': z.string().optional().meta({ description: 'Resume after this event id' }),
      }),
    },
    responses: {
      '200': {
        description: 'text/event-stream',
        content: { 'text/event-stream': { schema: z.string() } },
      },
      ...problems(400, 401, 404, 429),
    },
  },
  answerJobInput: {
    operationId: 'answerJobInput',
    tags: ['jobs'],
    summary: "Answer a tool's question (a job in input_required); the run resumes on any replica",
    requestParams: jobPath,
    requestBody: { content: { 'application/json': { schema: InputAnswerSchema } } },
    responses: {
      '200': json(JobViewSchema, 'The job, with the answer recorded'),
      ...problems(400, 401, 403, 404, 409, 415, 503),
    },
  },
  decideJobApproval: {
    operationId: 'decideJobApproval',
    tags: ['jobs'],
    summary: 'Approve or deny a call that waits for approval, bound to the digest of its arguments',
    requestParams: { path: z.object({ id: JobIdSchema, callId: CallIdSchema }) },
    requestBody: { content: { 'application/json': { schema: ApprovalDecisionSchema } } },
    responses: {
      '200': json(JobViewSchema, 'The job, with the decision recorded'),
      ...problems(400, 401, 403, 404, 409, 415, 422, 503),
    },
  },
  listJobWebhooks: {
    operationId: 'listJobWebhooks',
    tags: ['jobs'],
    summary: "The job's webhook deliveries: state, attempts, last status code or error, next attempt",
    requestParams: jobPath,
    responses: {
      '200': json(WebhookDeliveryListSchema, 'Deliveries'),
      ...problems(400, 401, 403, 404, 503),
    },
  },
  listTools: {
    operationId: 'listTools',
    tags: ['catalog'],
    summary: "The tools this team's jobs may call (an operator key: every tool)",
    responses: { '200': json(ToolListSchema, 'Tools with their availability'), ...problems(401, 503) },
  },
  listServers: {
    operationId: 'listServers',
    tags: ['fleet'],
    summary: 'The MCP servers behind those tools, their availability and sessions',
    responses: { '200': json(ServerListSchema, 'Servers'), ...problems(401, 503) },
  },
  listModels: {
    operationId: 'listModels',
    tags: ['catalog'],
    summary:
      "The model providers this team's agent jobs may name, whose keys they use, and the default model",
    description:
      "A team's own model keys (`teams.<team>.models`) or the deployment's; a job naming a provider not listed here is a 400 saying why. Never shows a key. A team key only: an operator key is a 403.",
    responses: { '200': json(ModelChoicesSchema, 'Model choices'), ...problems(401, 403) },
  },
  whoami: {
    operationId: 'whoami',
    tags: ['keys'],
    summary: "Who the key is: a team's (with its name) or an operator's",
    responses: { '200': json(ViewerSchema, 'The key'), ...problems(401) },
  },
  getLiveness: {
    operationId: 'getLiveness',
    tags: ['health'],
    security: [],
    summary: 'The process serves HTTP',
    responses: { '200': json(z.object({ status: z.literal('ok') }), 'Alive') },
  },
  getReadiness: {
    operationId: 'getReadiness',
    tags: ['health'],
    security: [],
    summary: 'Redis and PostgreSQL answer',
    responses: {
      '200': json(z.looseObject({ status: z.literal('ok'), missing: z.array(z.string()) }), 'Ready'),
      ...problems(503),
    },
  },
} satisfies Record<string, ZodOpenApiOperationObject>;

export type OpenApiDocument = ReturnType<typeof createDocument>;

/** The OpenAPI 3.1 description of the API, built from the schemas that validate and type it. */
export function openApiDocument(version: string): OpenApiDocument {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Switchyard',
      version,
      description:
        'Agent jobs whose MCP tool calls run on a fleet of tool workers. Every error is RFC 9457 application/problem+json with a stable `type` (urn:switchyard:problem:<kind>); every timestamp is ISO 8601.',
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "A team's API key, or an operator key (operators.apiKeys), which only reads",
        },
      },
      // Not referenced by a path (an event stream's items cannot be), listed for clients that follow jobs.
      schemas: Object.fromEntries(
        Object.values(JOB_EVENT_SCHEMAS).map((schema) => [String(schema.meta()?.id), schema]),
      ),
    },
    tags: [
      { name: 'jobs', description: 'Submit, follow, list, cancel and delete jobs' },
      { name: 'catalog', description: 'Tools and models' },
      { name: 'fleet', description: 'MCP servers and their sessions' },
      { name: 'keys', description: 'Who an API key is' },
      { name: 'health', description: 'Probes' },
    ],
    paths: {
      '/v1/jobs': { get: operations.listJobs, post: operations.submitJob },
      '/v1/jobs/{id}': { get: operations.getJob, delete: operations.deleteJob },
      '/v1/jobs/{id}/cancel': { post: operations.cancelJob },
      '/v1/jobs/{id}/events': { get: operations.streamJobEvents },
      '/v1/jobs/{id}/input': { post: operations.answerJobInput },
      '/v1/jobs/{id}/approvals/{callId}': { post: operations.decideJobApproval },
      '/v1/jobs/{id}/webhooks': { get: operations.listJobWebhooks },
      '/v1/tools': { get: operations.listTools },
      '/v1/servers': { get: operations.listServers },
      '/v1/models': { get: operations.listModels },
      '/v1/whoami': { get: operations.whoami },
      '/health/live': { get: operations.getLiveness },
      '/health/ready': { get: operations.getReadiness },
    },
  });
}
