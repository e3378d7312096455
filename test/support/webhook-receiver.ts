import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** When it arrived (receiver's clock). */
  at: number;
}

/** Decides the answer to one request; `nth` counts the requests to this path so far, from 1. */
export type WebhookHandler = (request: ReceivedWebhook, nth: number) => Promise<WebhookAnswer>;

export interface WebhookAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A customer's webhook endpoint: a real HTTP server on a free port that records every request and
 * answers as the test's handler for that path says (default 204). Tests wait on its arrivals.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly handlers = new Map<string, WebhookHandler>();
  private readonly waiters = new Set<() => void>();
  private readonly server: Server;

  constructor() {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
  }

  url(path: string): string {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('receiver not listening');
    return `http://127.0.0.1:${address.port}${path}`;
  }

  on(path: string, handler: WebhookHandler): void {
    this.handlers.set(path, handler);
  }

  /** Resolves with the first `count` requests that match, as soon as they have arrived. */
  waitFor(
    match: (request: ReceivedWebhook) => boolean,
    what: string,
    count = 1,
    timeoutMs = 60_000,
  ): Promise<ReceivedWebhook[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.filter(match);
        if (found.length < count) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(found.slice(0, count));
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`webhook receiver: not within ${timeoutMs} ms: ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '/';
    const received: ReceivedWebhook = {
      path,
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      ),
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    };
    this.received.push(received);
    const nth = this.received.filter((earlier) => earlier.path === path).length;
    const handler = this.handlers.get(path);
    const answer: WebhookAnswer = handler
      ? await handler(received, nth).catch(() => ({ status: 599 }))
      : { status: 204 };
    response.writeHead(answer.status, answer.headers ?? {});
    response.end(answer.body ?? '');
    for (const waiter of [...this.waiters]) waiter();
  }
}
