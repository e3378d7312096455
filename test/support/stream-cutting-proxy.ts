import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP pass-through in front of the orchestrator that cuts event streams: the first `cuts` responses
 * of `GET …/events` are cut (the TCP connection destroyed, as a proxy timeout or a network drop does)
 * right after their first chunk that carries an event. Everything else passes unchanged. It records
 * the Last-Event-ID each event-stream request came with, so a test sees how a client resumed.
 */
export class StreamCuttingProxy {
  readonly lastEventIds: Array<string | undefined> = [];
  private readonly server: Server;
  private cutsLeft: number;

  private constructor(target: URL, cuts: number) {
    this.cutsLeft = cuts;
    this.server = createServer((incoming, outgoing) => {
      const isEventStream = /\/events(\?|$)/.test(incoming.url ?? '');
      if (isEventStream) this.lastEventIds.push(incoming.headers['last-event-id'] as string | undefined);
      const cut = isEventStream && this.cutsLeft > 0;
      if (cut) this.cutsLeft -= 1;
      const upstream = request(
        new URL(incoming.url ?? '/', target),
        { method: incoming.method, headers: { ...incoming.headers, host: target.host } },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            outgoing.write(chunk);
            if (cut && /(^|\n)id:/.test(chunk.toString())) {
              upstream.destroy();
              // Let the chunk leave first: the client has the event, then loses the connection.
              setImmediate(() => outgoing.socket?.destroy());
            }
          });
          answer.on('end', () => outgoing.end());
        },
      );
      upstream.on('error', () => outgoing.socket?.destroy());
      outgoing.on('close', () => upstream.destroy());
      incoming.pipe(upstream);
    });
  }

  static async start(target: string, cuts: number): Promise<StreamCuttingProxy> {
    const proxy = new StreamCuttingProxy(new URL(target), cuts);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
