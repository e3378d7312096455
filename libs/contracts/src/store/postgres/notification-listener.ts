import pg from 'pg';
import { quotedChannel } from './notification-channel.ts';

export interface NotificationListenerOptions {
  /** The database (the store's url). NOTIFY is database-wide, so no search_path is needed. */
  url: string;
  /** Names the connection in pg_stat_activity. */
  applicationName: string;
  /** Full channel name (notificationChannel) → what to do with each payload on it. */
  channels: Readonly<Record<string, (payload: string) => void>>;
  /**
   * Called after every reconnection, once LISTEN is in place again: notifications sent while the
   * connection was down are lost (as with Redis pub/sub), so a concern that has a table to catch up from
   * reads it here.
   */
  onReconnected?: () => void;
  onError: (error: unknown, what: string) => void;
  /** A connection that stops answering is noticed by this ping, not by TCP's hours-long timeouts. */
  pingEveryMs?: number;
  pingTimeoutMs?: number;
  /** Reconnection back-off: doubles from min to max. */
  retryDelayMs?: { min: number; max: number };
}

/**
 * LISTEN on a dedicated pg.Client, one per concern and process. Not a pool checkout: a pool hands a
 * broken connection back silently, while this owns its socket, notices a loss (an error, the end, or a
 * ping left unanswered), reconnects with back-off and LISTENs again, and tells the concern it may have
 * missed notifications. Handlers are synchronous; one that throws is reported, never stops the others.
 */
export class NotificationListener {
  private client: pg.Client | undefined;
  private closing = false;
  private reconnecting: Promise<void> | undefined;
  private readonly pingTimer: NodeJS.Timeout;
  private pinging = false;
  /** Ends the back-off wait early when the listener is closed. */
  private endWait: (() => void) | undefined;

  private constructor(private readonly options: NotificationListenerOptions) {
    this.pingTimer = setInterval(() => void this.ping(), options.pingEveryMs ?? 30_000);
    this.pingTimer.unref();
  }

  /**
   * Connects and LISTENs. Resolves after the first attempt even when it failed (reported to onError and
   * retried in the background, onReconnected called once it succeeds): a database down at start-up must
   * not keep a process from starting any more than a Redis down would.
   */
  static async open(options: NotificationListenerOptions): Promise<NotificationListener> {
    const listener = new NotificationListener(options);
    try {
      listener.client = await listener.connect();
    } catch (error) {
      options.onError(error, `could not LISTEN on ${Object.keys(options.channels).join(', ')}`);
      listener.reconnecting = listener.reconnect().finally(() => {
        listener.reconnecting = undefined;
      });
    }
    return listener;
  }

  /** Whether LISTEN is in place now (not while reconnecting). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.pingTimer);
    this.endWait?.();
    await this.reconnecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName.slice(0, 63),
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 10_000,
    });
    client.on('notification', (message) => this.deliver(message.channel, message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the server ended the connection')));
    try {
      await client.connect();
      const channels = Object.keys(this.options.channels);
      await client.query(channels.map((channel) => `LISTEN ${quotedChannel(channel)}`).join('; '));
    } catch (error) {
      client.removeAllListeners('end');
      client.connection.stream.destroy();
      throw error;
    }
    return client;
  }

  private deliver(channel: string, payload: string): void {
    try {
      this.options.channels[channel]?.(payload);
    } catch (error) {
      this.options.onError(error, `a handler of notification channel ${channel} failed`);
    }
  }

  /** The current connection is gone (an error, its end, or a ping timeout): one reconnection at a time. */
  private lost(client: pg.Client, error: unknown): void {
    if (client !== this.client || this.closing) return;
    this.client = undefined;
    this.options.onError(error, 'LISTEN connection lost');
    client.removeAllListeners('end');
    // A socket that stopped answering would hold end() forever: drop it instead.
    client.connection.stream.destroy();
    this.reconnecting = this.reconnect().finally(() => {
      this.reconnecting = undefined;
    });
  }

  private async reconnect(): Promise<void> {
    const { min, max } = this.options.retryDelayMs ?? { min: 250, max: 5_000 };
    let delay = min;
    while (!this.closing) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.endWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.endWait = undefined;
      if (this.closing) return;
      try {
        const client = await this.connect();
        if (this.closing) {
          await client.end().catch(() => undefined);
          return;
        }
        this.client = client;
        this.options.onReconnected?.();
        return;
      } catch (error) {
        this.options.onError(error, 'could not reconnect the LISTEN connection');
        delay = Math.min(delay * 2, max);
      }
    }
  }

  private async ping(): Promise<void> {
    const client = this.client;
    if (!client || this.pinging || this.closing) return;
    this.pinging = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeoutMs = this.options.pingTimeoutMs ?? 10_000;
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer to a ping within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
    } catch (error) {
      this.lost(client, error);
    } finally {
      clearTimeout(timer);
      this.pinging = false;
    }
  }
}
