import type { components, operations } from './schema.ts';

/** Names for the generated schemas (src/schema.d.ts is generated from openapi.json; never edit it). */
type Schemas = components['schemas'];

/** A job, a call, an outcome and a message as the client returns them (texts filled in: outcome-text.ts). */
export type { Job, Message, ToolCall, ToolCallOutcome } from './outcome-text.ts';
export type JobSummary = Schemas['JobSummary'];
export type JobList = Schemas['JobList'];
export type JobStatus = Schemas['JobStatus'];
export type JobRequest = Schemas['JobRequest'];
export type ToolCallState = Schemas['ToolCallState'];
export type ToolCallAttempt = Schemas['ToolCallAttempt'];
export type ToolCallWait = Schemas['ToolCallWait'];
export type BatchSummary = Schemas['BatchSummary'];
export type Tool = Schemas['Tool'];
export type ToolList = Schemas['ToolList'];
export type Server = Schemas['Server'];
export type ServerList = Schemas['ServerList'];
/** What `GET /v1/models` answers: the providers a team's agent jobs may name, and its default model. */
export type ModelChoices = Schemas['ModelChoices'];
/** Who a key is (`GET /v1/whoami`): a team's, with its name, or an operator's (read-only). */
export type Viewer = Schemas['Viewer'];
/** RFC 9457 problem details, as every error of the API is answered. */
export type Problem = Schemas['Problem'];
export type ProblemType = Problem['type'];
/** The query of `GET /v1/jobs`, as the client sends it. */
export type JobListQuery = NonNullable<operations['listJobs']['parameters']['query']>;

/** A question or an approval a job's call waits for (`GET /v1/jobs/:id` lists them in `pendingInputs`). */
export type PendingInput = Schemas['PendingInput'];
/** `POST /v1/jobs/:id/input`: the answer to a tool's question. */
export type InputAnswer = NonNullable<
  operations['answerJobInput']['requestBody']
>['content']['application/json'];
/** `POST /v1/jobs/:id/approvals/:callId`: a decision, bound to the digest of the call's arguments. */
export type ApprovalDecision = NonNullable<
  operations['decideJobApproval']['requestBody']
>['content']['application/json'];

/** What `GET /v1/jobs/:id/webhooks` answers: the deliveries of the job's webhook. */
export type JobWebhookDeliveries =
  operations['listJobWebhooks']['responses'][200]['content']['application/json'];

/**
 * Every job status, for what needs them at run time (a CLI checking `--status`). The typecheck fails
 * when the document gains a status this list lacks (or loses one it has): regenerate, then update it.
 */
export const JOB_STATUSES = [
  'queued',
  'running',
  'input_required',
  'succeeded',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const satisfies readonly JobStatus[];
type MissingStatuses = Exclude<JobStatus, (typeof JOB_STATUSES)[number]>;
export const JOB_STATUSES_COMPLETE: [MissingStatuses] extends [never] ? true : MissingStatuses = true;

/** The statuses a job ends in; its event stream ends after one of them. */
export const FINAL_JOB_STATUSES: ReadonlySet<JobStatus> = new Set<JobStatus>([
  'succeeded',
  'completed_with_errors',
  'failed',
  'cancelled',
]);
