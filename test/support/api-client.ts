import {
  createSwitchyardClient,
  type JobEvent,
  SwitchyardApiError,
  type SwitchyardClient,
} from '@switchyard/client';

/**
 * The suites' view of the orchestrator API: a thin layer over the typed client (@switchyard/client)
 * that keeps the answers raw (status, body, headers), because the suites also send what no typed
 * client would (bad bodies, wrong media types, unknown paths) and check every answer.
 */
export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface SseEvent {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are whatever the API returned, checked by the tests
export type Json = any;

/** openapi-fetch's request, without the document's typing: the suites call any path with any body. */
type UntypedRequest = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

const FINAL = new Set(['succeeded', 'completed_with_errors', 'failed', 'cancelled']);

export class ApiClient {
  readonly client: SwitchyardClient;

  constructor(
    readonly baseUrl: string,
    apiKey?: string,
  ) {
    this.client = createSwitchyardClient({ url: baseUrl, ...(apiKey ? { apiKey } : {}) });
  }

  withKey(apiKey: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, apiKey);
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<Json>> {
    const send = this.client.http.request as unknown as UntypedRequest;
    const { data, error, response } = await send(method.toLowerCase(), path, {
      headers,
      parseAs: 'text',
      // A string is sent as written (the suites' malformed bodies); anything else as JSON.
      ...(body !== undefined
        ? {
            body,
            bodySerializer: (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value)),
          }
        : {}),
    });
    // openapi-fetch parsed an error body already (when it was JSON); a success body is the text asked for.
    const answer = response.ok ? (data ?? '') : (error ?? '');
    return {
      status: response.status,
      body: typeof answer === 'string' ? parse(answer) : answer,
      headers: response.headers,
    };
  }

  submit(job: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<Json>> {
    return this.request('POST', '/v1/jobs', job, headers);
  }

  async job(id: string): Promise<Json> {
    return this.client.getJob(id);
  }

  /**
   * Reads the job's server-sent events on one connection (the client's own reader) until `until` says
   * stop (default: a final status), then returns every event read. No polling, no reconnect: a stream
   * that ends returns what it had.
   */
  async events(
    id: string,
    until: (event: SseEvent) => boolean = isFinal,
    timeoutMs = 120_000,
    lastEventId?: number,
  ): Promise<SseEvent[]> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const events: SseEvent[] = [];
    try {
      const stream = await this.client.jobEvents(id, {
        signal: controller.signal,
        ...(lastEventId ? { lastEventId: String(lastEventId) } : {}),
      });
      for await (const received of stream) {
        const event = sseEvent(received);
        events.push(event);
        if (until(event)) return events;
      }
      return events;
    } catch (error) {
      if (controller.signal.aborted)
        throw new Error(
          `events of ${id}: nothing final within ${timeoutMs} ms; got ${JSON.stringify(events.map((event) => event.event))}`,
        );
      if (error instanceof SwitchyardApiError) throw new Error(`events of ${id}: HTTP ${error.status}`);
      throw error;
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }

  /** Waits (on the event stream) for the job to end and returns it. */
  async finished(id: string, timeoutMs?: number): Promise<Json> {
    await this.events(id, isFinal, timeoutMs);
    return this.job(id);
  }

  /**
   * Like `finished`, through a dependency outage: a stream that ends early (PostgreSQL or Redis went away
   * under it) is read again, as an SSE client reconnects, until the job reads final.
   */
  async finishedDespiteOutages(id: string, timeoutMs = 120_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      await this.events(id, isFinal, deadline - Date.now()).catch(() => undefined);
      const response = await this.request('GET', `/v1/jobs/${id}`);
      if (response.status === 200 && FINAL.has(String(response.body.status))) return response.body;
    }
    throw new Error(`job ${id} not final within ${timeoutMs} ms`);
  }
}

function sseEvent(event: JobEvent): SseEvent {
  return {
    id: Number(event.id),
    event: event.event === 'other' ? event.name : event.event,
    data: event.data as Record<string, unknown>,
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isFinal(event: SseEvent): boolean {
  return event.event === 'status' && FINAL.has(String(event.data.status));
}
