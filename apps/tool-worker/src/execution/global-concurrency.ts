import type { Store } from '@switchyard/contracts';
import type { Queue } from 'bullmq';
import type { Logger } from '../runtime/logger.ts';

/** The connection whose loss may lose the limit: 'close' when it drops, 'ready' when it is back. */
export interface ReconnectEvents {
  on(event: 'close' | 'ready', listener: () => void): unknown;
  off(event: 'close' | 'ready', listener: () => void): unknown;
}

/**
 * Where a reconnect that may have lost the limit is announced: the Redis connection BullMQ's Queue and
 * Worker share (a Redis that comes back may be an empty one). None on PostgreSQL: the limit is a row of
 * BullMQ's `meta` table, and a reconnect to the same database loses nothing, so the gate never closes
 * there; a restore from an older backup is what the heartbeat check is for.
 */
export function reconnectsOf(store: Store): ReconnectEvents | undefined {
  return store.kind === 'redis' ? store.redis : undefined;
}

/**
 * Keeps a server's fleet-wide `concurrency` in its queue's meta (Redis hash, or BullMQ's PG `meta` table),
 * where BullMQ's move to active reads it. Setting it once at start-up is not enough: a Redis that
 * restarts without its data (no persistence, a failover to an empty replica, a FLUSHALL) or a database
 * restored from an older backup forgets it, and BullMQ then lets every worker take a call at once. So it
 * is re-set whenever the connection becomes ready again, and checked on every heartbeat against the
 * config (docs/operations.md, "When Redis loses its data").
 *
 * It is also the gate the consumer's fetches wait on (GatedWorker): closed when the connection drops,
 * opened once the value is re-set on the new connection. Commands on one connection run in order, so
 * every fetch this worker makes after a reconnect reaches Redis after its own re-set.
 */
export class GlobalConcurrency {
  private open = true;
  /** Counts connection losses: an answer to a command sent before the last loss opens nothing. */
  private losses = 0;
  private waiters: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  /** One check at a time: while Redis is down a check waits, and the next beats skip theirs. */
  private checking = false;
  private stopped = false;
  private readonly onClose = () => this.closeGate();
  private readonly onReady = () => void this.reassert('reconnected');
  private readonly log: Logger;

  constructor(
    private readonly deps: {
      queue: Queue;
      /** Reconnects of the connection BullMQ's Worker and Queue use (reconnectsOf); none: the gate stays open. */
      reconnects: ReconnectEvents | undefined;
      concurrency: number;
      /** How often the value is checked; the worker's heartbeat interval. */
      checkEveryMs: number;
      server: string;
      /** Bound to the worker id already (main.ts). */
      log: Logger;
    },
  ) {
    this.log = deps.log.child({ server: deps.server });
  }

  /** Sets the value, then keeps it: on every reconnect and on every check. */
  async start(): Promise<void> {
    const { reconnects, queue, concurrency, checkEveryMs } = this.deps;
    reconnects?.on('close', this.onClose);
    reconnects?.on('ready', this.onReady);
    await queue.setGlobalConcurrency(concurrency);
    this.timer = setInterval(() => void this.check(), checkEveryMs);
    this.timer.unref();
  }

  /** Resolves once fetching is safe: the value has been set since the connection last came up. */
  ready(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Whether a fetch may go ahead right now (BullMQ's fetch-next-on-finish asks synchronously). */
  get isOpen(): boolean {
    return this.open;
  }

  /** Compares the stored value with the config and re-sets it when it differs or is missing. */
  async check(): Promise<void> {
    if (this.checking || this.stopped) return;
    this.checking = true;
    const losses = this.losses;
    try {
      const found = await this.deps.queue.getGlobalConcurrency();
      if (found === this.deps.concurrency) this.openGate(losses);
      else await this.reassert(found === null ? 'missing' : `was ${found}`);
    } catch (error) {
      this.log.warn({ err: error }, 'could not check the queue concurrency; checked again on the next beat');
    } finally {
      this.checking = false;
    }
  }

  /** Stops checking and lets any waiting fetch go on (the closing worker then takes no job). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.deps.reconnects?.off('close', this.onClose);
    this.deps.reconnects?.off('ready', this.onReady);
    this.openGate(this.losses);
  }

  private async reassert(reason: string): Promise<void> {
    if (this.stopped) return;
    const { queue, concurrency } = this.deps;
    const losses = this.losses;
    try {
      await queue.setGlobalConcurrency(concurrency);
      // A re-set after a reconnect is routine; one the check found missing or changed is news.
      if (reason === 'reconnected') this.log.info({ concurrency, reason }, 'queue concurrency re-set');
      else this.log.warn({ concurrency, reason }, 'queue concurrency re-set');
      this.openGate(losses);
    } catch (error) {
      // The gate stays closed: the next reconnect or heartbeat check tries again.
      this.log.error({ concurrency, reason, err: error }, 'could not re-set the queue concurrency');
    }
  }

  private closeGate(): void {
    this.losses += 1;
    if (!this.open || this.stopped) return;
    this.open = false;
    this.log.info('redis connection lost: no call is taken until the queue concurrency is re-set');
  }

  /** Opens the gate if the connection has not been lost since `losses` was read. */
  private openGate(losses: number): void {
    if (losses !== this.losses) return;
    this.open = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
