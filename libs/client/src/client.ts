import createClient, { type Client } from 'openapi-fetch';
import { apiError, SwitchyardConnectionError } from './errors.ts';
import { type FollowOptions, followJobEvents, type JobEvent, parseJobEvents } from './job-events.ts';
import { withOutcomeTexts } from './outcome-text.ts';
import type { components, paths } from './schema.ts';
import {
  type ApprovalDecision,
  FINAL_JOB_STATUSES,
  type InputAnswer,
  type Job,
  type JobList,
  type JobListQuery,
  type JobRequest,
  type JobWebhookDeliveries,
  type ModelChoices,
  type ServerList,
  type ToolList,
  type Viewer,
} from './types.ts';

type WireJob = components['schemas']['Job'];

export interface SwitchyardClientOptions {
  /** The orchestrator, e.g. http://127.0.0.1:3000 */
  url: string;
  /** A team's (or an operator's) API key, sent as a bearer token. */
  apiKey?: string;
  /** Another fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

/** What openapi-fetch answers: data on success, the parsed error body otherwise, and the response. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The Switchyard API, typed from its OpenAPI document. Each method returns the response body or throws
 * a SwitchyardApiError carrying the RFC 9457 problem (or a SwitchyardConnectionError: no answer).
 * `http` is the underlying openapi-fetch client, typed by the same document, for anything else.
 */
export class SwitchyardClient {
  readonly http: Client<paths>;

  constructor(readonly options: SwitchyardClientOptions) {
    this.http = createClient<paths>({
      baseUrl: options.url.replace(/\/+$/, ''),
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /** A client of the same API with another key (or none). */
  withApiKey(apiKey: string | undefined): SwitchyardClient {
    return new SwitchyardClient({ ...this.options, ...{ apiKey } });
  }

  /**
   * Submits a job (201). With an Idempotency-Key, the same key and body again return the first job
   * (200); the same key with another body is a 422 `idempotency-key-reused`.
   */
  submitJob(request: JobRequest, options: { idempotencyKey?: string } = {}): Promise<Job> {
    const header = options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};
    return this.job('POST /v1/jobs', () => this.http.POST('/v1/jobs', { body: request, params: { header } }));
  }

  getJob(id: string): Promise<Job> {
    return this.job(`GET /v1/jobs/${id}`, () => this.http.GET('/v1/jobs/{id}', { params: { path: { id } } }));
  }

  /**
   * One page of the team's jobs (an operator key: every team's, or `team`'s), newest first; pass
   * `nextCursor` (with the same filters) for the next.
   */
  listJobs(query: JobListQuery = {}): Promise<JobList> {
    return this.call('GET /v1/jobs', () => this.http.GET('/v1/jobs', { params: { query } }));
  }

  cancelJob(id: string): Promise<Job> {
    return this.job(`POST /v1/jobs/${id}/cancel`, () =>
      this.http.POST('/v1/jobs/{id}/cancel', { params: { path: { id } } }),
    );
  }

  /** Deletes an ended job (a queued or running one is a 409 `conflict`: cancel it first). */
  async deleteJob(id: string): Promise<void> {
    await this.call(`DELETE /v1/jobs/${id}`, () =>
      this.http.DELETE('/v1/jobs/{id}', { params: { path: { id } } }),
    );
  }

  /** Answers the question a call of the job waits for (accept with content, decline or cancel). */
  answerInput(id: string, answer: InputAnswer): Promise<Job> {
    return this.job(`POST /v1/jobs/${id}/input`, () =>
      this.http.POST('/v1/jobs/{id}/input', { params: { path: { id } }, body: answer }),
    );
  }

  /**
   * Approves or denies a call that waits for approval. The decision names the digest of the arguments
   * it was made on (`pendingInputs[].digest`): another digest is a 422, so nobody approves unseen arguments.
   */
  decideApproval(id: string, callId: string, decision: ApprovalDecision): Promise<Job> {
    return this.job(`POST /v1/jobs/${id}/approvals/${callId}`, () =>
      this.http.POST('/v1/jobs/{id}/approvals/{callId}', {
        params: { path: { id, callId } },
        body: decision,
      }),
    );
  }

  /** The job's webhook deliveries: each attempt's state, status code and error. */
  listJobWebhooks(id: string): Promise<JobWebhookDeliveries> {
    return this.call(`GET /v1/jobs/${id}/webhooks`, () =>
      this.http.GET('/v1/jobs/{id}/webhooks', { params: { path: { id } } }),
    );
  }

  listTools(): Promise<ToolList> {
    return this.call('GET /v1/tools', () => this.http.GET('/v1/tools'));
  }

  /** The model providers this team's agent jobs may name (with whose keys) and its default model. */
  listModels(): Promise<ModelChoices> {
    return this.call('GET /v1/models', () => this.http.GET('/v1/models'));
  }

  listServers(): Promise<ServerList> {
    return this.call('GET /v1/servers', () => this.http.GET('/v1/servers'));
  }

  /** Who this client's key is: a team's (with its name) or an operator's; a wrong key is a 401. */
  whoami(): Promise<Viewer> {
    return this.call('GET /v1/whoami', () => this.http.GET('/v1/whoami'));
  }

  /**
   * One connection to the job's event stream: its events (after `lastEventId`, if given) until the
   * server ends it after the final status, or the connection drops. `followJob` reconnects; this does not.
   */
  async jobEvents(
    id: string,
    options: { lastEventId?: string; signal?: AbortSignal } = {},
  ): Promise<AsyncGenerator<JobEvent>> {
    const header = options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {};
    const body = await this.call(`GET /v1/jobs/${id}/events`, () =>
      this.http.GET('/v1/jobs/{id}/events', {
        params: { path: { id }, header },
        parseAs: 'stream',
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
    if (!body) throw new Error(`GET /v1/jobs/${id}/events: the answer has no body`);
    return parseJobEvents(body);
  }

  /**
   * Follows the job's events until its final status, reconnecting after a dropped connection with
   * Last-Event-ID so that no event is missed or repeated.
   */
  followJob(id: string, options: FollowOptions = {}): AsyncGenerator<JobEvent> {
    return followJobEvents(
      {
        open: (lastEventId, signal) =>
          this.jobEvents(id, { ...(lastEventId ? { lastEventId } : {}), ...(signal ? { signal } : {}) }),
        isFinal: async () => FINAL_JOB_STATUSES.has((await this.getJob(id)).status),
      },
      options,
    );
  }

  /** Follows the job until it ends, then returns it. */
  async waitForJob(id: string, options: FollowOptions = {}): Promise<Job> {
    for await (const _ of this.followJob(id, options));
    return this.getJob(id);
  }

  /** A call answering a job: its outcomes' `text` filled in where the API left it out. */
  private async job(operation: string, send: () => Promise<Answer<WireJob>>): Promise<Job> {
    return withOutcomeTexts(await this.call(operation, send));
  }

  private async call<T>(operation: string, send: () => Promise<Answer<T>>): Promise<T> {
    let answer: Answer<T>;
    try {
      answer = await send();
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') throw error;
      throw new SwitchyardConnectionError(operation, this.options.url, error);
    }
    if (!answer.response.ok) throw apiError(operation, answer.response, answer.error);
    return answer.data as T;
  }
}

export function createSwitchyardClient(options: SwitchyardClientOptions): SwitchyardClient {
  return new SwitchyardClient(options);
}
