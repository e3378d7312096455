import { EventSourceParserStream } from 'eventsource-parser/stream';

/** A small HTTP client for the orchestrator API, as a team would use it. */
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

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
  ) {}

  withKey(apiKey: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, apiKey);
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<Json>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: response.status, body: parsed as Json, headers: response.headers };
  }

  submit(job: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<Json>> {
    return this.request('POST', '/v1/jobs', job, headers);
  }

  async job(id: string): Promise<Json> {
    const response = await this.request('GET', `/v1/jobs/${id}`);
    if (response.status !== 200)
      throw new Error(`GET job ${id}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /**
   * Reads the job's server-sent events until `until` says stop (default: a final status), then
   * returns every event read. The stream is the API's own; no polling.
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
      const response = await fetch(`${this.baseUrl}/v1/jobs/${id}/events`, {
        headers: {
          ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
          ...(lastEventId ? { 'last-event-id': String(lastEventId) } : {}),
        },
        signal: controller.signal,
      });
      if (response.status !== 200 || !response.body)
        throw new Error(`events of ${id}: HTTP ${response.status}`);
      const messages = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream());
      for await (const message of messages) {
        if (!message.event) continue;
        const event: SseEvent = {
          id: Number(message.id),
          event: message.event,
          data: JSON.parse(message.data) as Record<string, unknown>,
        };
        events.push(event);
        if (until(event)) return events;
      }
      return events;
    } catch (error) {
      if (controller.signal.aborted)
        throw new Error(
          `events of ${id}: nothing final within ${timeoutMs} ms; got ${JSON.stringify(events.map((event) => event.event))}`,
        );
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
}

function isFinal(event: SseEvent): boolean {
  return event.event === 'status' && FINAL.has(String(event.data.status));
}
