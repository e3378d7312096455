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
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type && data) onEvent(type, JSON.parse(data) as Record<string, unknown>);
      }
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: printed as returned by the API
  async job(id: string): Promise<any> {
    const response = await fetch(`${this.baseUrl}/v1/jobs/${id}`, { headers: this.headers() });
    return response.json();
  }
}
