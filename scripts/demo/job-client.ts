import { EventSourceParserStream } from 'eventsource-parser/stream';

/** Just enough of the orchestrator API for the demo: submit, follow the event stream, read. */
export class JobClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' };
  }

  async submit(body: unknown): Promise<{ id: string }> {
    const response = await fetch(`${this.baseUrl}/v1/jobs`, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { id: string; message?: string };
    if (response.status !== 201) throw new Error(`submit failed (${response.status}): ${json.message}`);
    return json;
  }

  /** Follows GET /v1/jobs/:id/events until the stream ends (it does after the final status). */
  async waitUntilFinished(
    id: string,
    onEvent: (type: string, data: Record<string, unknown>) => void,
  ): Promise<void> {
    const response = await fetch(`${this.baseUrl}/v1/jobs/${id}/events`, { headers: this.headers() });
    if (!response.body) throw new Error(`no event stream for ${id}`);
    const messages = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    for await (const message of messages) {
      if (message.event) onEvent(message.event, JSON.parse(message.data) as Record<string, unknown>);
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: printed as returned by the API
  async job(id: string): Promise<any> {
    const response = await fetch(`${this.baseUrl}/v1/jobs/${id}`, { headers: this.headers() });
    return response.json();
  }
}
