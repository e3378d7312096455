import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat completion request the stub received: whose key it carried and which model it named. */
export interface StubRequest {
  authorization: string | undefined;
  model: string;
}

/**
 * A tiny OpenAI-compatible model server on loopback: it records the Authorization header of every
 * `POST /v1/chat/completions` and answers with a final message naming the model. A key in `refused`
 * gets the 401 OpenAI sends, which quotes the key ("Incorrect API key provided: …"), so a test can prove
 * the key does not travel on into a job's error, events or logs.
 */
export class OpenAiStub {
  readonly requests: StubRequest[] = [];

  private constructor(
    private readonly server: Server,
    private readonly refused: ReadonlySet<string>,
  ) {}

  static async start(refused: string[] = []): Promise<OpenAiStub> {
    const server = createServer();
    const stub = new OpenAiStub(server, new Set(refused));
    server.on('request', (request, response) => {
      stub.answer(request).then(
        ({ status, body }) => {
          response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        },
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return stub;
  }

  /** The base URL a provider entry points at (`baseUrl`, `OPENAI_BASE_URL`). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The keys the stub was sent, in order (the bearer token of each request). */
  keysSeen(): string[] {
    return this.requests.map((request) => request.authorization?.replace(/^Bearer /, '') ?? '(none)');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage): Promise<{ status: number; body: unknown }> {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions'))
      return { status: 404, body: { error: { message: `no route ${request.method} ${request.url}` } } };
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const { model } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string };
    const authorization = request.headers.authorization;
    this.requests.push({ authorization, model });
    const key = authorization?.replace(/^Bearer /, '') ?? '';
    if (this.refused.has(key))
      return {
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
      };
    return {
      status: 200,
      body: {
        id: `chatcmpl-${this.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: `answer from ${model}` },
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      },
    };
  }
}
