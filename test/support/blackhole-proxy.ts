import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP pass-through on loopback (in front of a Redis, say) that can be cut off like a network
 * partition: `blackhole()` stops forwarding in both directions but keeps every socket open, so neither
 * side sees a reset or a close — commands just get no answer. New connections are accepted and held the
 * same way. `heal()` forwards again, including what was sent meanwhile (TCP would have retransmitted
 * it). That differs from a frozen peer (SIGSTOP), whose own timers stop too, and from a reset.
 */
export class BlackholeProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private dark = false;

  private constructor(targetPort: number, targetHost: string) {
    this.server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
        if (this.dark) socket.pause();
      }
      this.forward(client, upstream);
      this.forward(upstream, client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  static async start(target: string): Promise<BlackholeProxy> {
    const url = new URL(target);
    const proxy = new BlackholeProxy(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's address as a Redis URL. */
  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get isDark(): boolean {
    return this.dark;
  }

  /** Stops forwarding; sockets stay open (a partition, not a reset). */
  blackhole(): void {
    this.dark = true;
    for (const socket of this.sockets) socket.pause();
  }

  /** Forwards again, what was held first. */
  heal(): void {
    this.dark = false;
    for (const socket of this.sockets) socket.resume();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** `from` → `to` with backpressure; a paused (dark) `from` emits no data, so nothing passes. */
  private forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (to.write(chunk)) return;
      from.pause();
      to.once('drain', () => {
        if (!this.dark) from.resume();
      });
    });
  }
}
