import { primaries, type RedisConnection, type ReplicaWaitSettings } from '@switchyard/contracts';
import { Cluster } from 'ioredis';
import type { Logger } from '../runtime/logger.ts';

/**
 * How many replicas must confirm a non-idempotent call's marker (WAIT) before it is sent: the setting,
 * and for `auto` the replicas the call's primary reported connected. Not known (a cluster node the last
 * look did not see, or INFO never answered): one when any primary has replicas or nothing is known, so a
 * marker is never left to luck; none when every primary seen has none. Pure, tested on its own.
 */
export function replicasToWaitFor(
  setting: ReplicaWaitSettings['replicas'],
  connected: number | undefined,
  seen: readonly number[],
): number {
  if (setting !== 'auto') return setting;
  if (connected !== undefined) return connected;
  return seen.length > 0 && seen.every((count) => count === 0) ? 0 : 1;
}

/**
 * The replicas of INFO replication that can acknowledge a WAIT: `slave<n>:…,state=online,…` (a replica
 * still in its initial sync is among connected_slaves but cannot acknowledge anything yet, and would
 * fail every wait until it is done). Undefined when the node is not a primary.
 */
export function connectedReplicas(info: string): number | undefined {
  if (!/^role:master\s*$/m.test(info)) return undefined;
  return info.split(/\r?\n/).filter((line) => /^slave\d+:.*\bstate=online\b/.test(line)).length;
}

/**
 * The worker's view of its primaries' replicas, read with INFO replication at start, every heartbeat and
 * on every reconnect (a failover brings a primary with other replicas, or none) — never per call. One
 * per worker process, shared by its queue consumers.
 */
export class ReplicaWait {
  /** Connected replicas per primary (`host:port`); one entry, under '', for a single server. */
  private counts = new Map<string, number>();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onReady = () => void this.refresh();
  /** The WAIT timeout: at most a quarter of the lock, since WAIT holds up the shared connection. */
  readonly timeoutMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly settings: ReplicaWaitSettings,
    lockDurationMs: number,
    private readonly refreshMs: number,
    private readonly log: Logger,
  ) {
    this.timeoutMs = Math.max(1, Math.min(settings.timeoutMs, Math.floor(lockDurationMs / 4)));
  }

  /** Off altogether (`replicas: 0`): no INFO, no WAIT. */
  get disabled(): boolean {
    return this.settings.replicas === 0;
  }

  start(): void {
    if (this.disabled) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
    this.redis.on('ready', this.onReady);
  }

  stop(): void {
    clearInterval(this.timer);
    this.redis.off('ready', this.onReady);
  }

  /**
   * The replicas to wait for on the primary `node` (`host:port` on a cluster, undefined for a single
   * server): the first call waits for the first INFO, later ones use what the last refresh saw.
   */
  async required(node: string | undefined): Promise<number> {
    if (this.disabled) return 0;
    if (this.settings.replicas !== 'auto') return this.settings.replicas;
    if (this.counts.size === 0) await this.refresh();
    return replicasToWaitFor('auto', this.counts.get(node ?? ''), [...this.counts.values()]);
  }

  /** A WAIT came back short: look again now (a replica may have gone; the primary may have changed). */
  recheck(): void {
    void this.refresh();
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const next = new Map<string, number>();
    const cluster = this.redis instanceof Cluster;
    await Promise.all(
      primaries(this.redis).map(async (node) => {
        try {
          const count = connectedReplicas(await node.info('replication'));
          if (count !== undefined) {
            next.set(cluster ? `${node.options.host}:${node.options.port}` : '', count);
          }
        } catch (error) {
          this.log.warn({ err: error }, 'could not read the replicas of a Redis primary (INFO replication)');
        }
      }),
    );
    // A failed look keeps the last one: a Redis outage is not a reason to stop waiting for replicas.
    if (next.size === 0) return;
    const before = JSON.stringify([...this.counts].sort());
    const after = JSON.stringify([...next].sort());
    this.counts = next;
    if (before !== after) {
      this.log.info(
        // One number for a single server; per primary (`host:port`) on a cluster.
        { replicas: cluster ? Object.fromEntries(next) : next.get(''), timeoutMs: this.timeoutMs },
        'replicas a non-idempotent call waits for',
      );
    }
  }
}
