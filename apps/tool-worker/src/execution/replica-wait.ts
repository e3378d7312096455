import {
  ConfigError,
  primaries,
  type RedisConnection,
  type ReplicaWaitSettings,
  type Store,
} from '@switchyard/contracts';
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
 * The replicas a non-idempotent call's marker must reach before it is sent (worker.replicaWait), as the
 * fence asks for them. One per worker process, shared by its queue consumers.
 */
export interface ReplicaWait {
  /** Off altogether: no look at the replicas, no wait. */
  readonly disabled: boolean;
  /** How long the fence waits for the replicas. */
  readonly timeoutMs: number;
  /** The replicas to wait for on the primary `node` (`host:port` on a cluster, undefined otherwise). */
  required(node: string | undefined): Promise<number>;
  /** A wait came back short: look again now. */
  recheck(): void;
  start(): void;
  stop(): void;
}

/**
 * The replica wait of this store. On PostgreSQL it is not built (docs/postgres-backend.md §2: the fence's
 * per-statement synchronous commit needs a standby to be tested on): `auto` and 0 mean no wait there, and
 * a required count is refused at start-up rather than silently not kept.
 */
export function replicaWaitFor(
  store: Store,
  settings: ReplicaWaitSettings,
  lockDurationMs: number,
  refreshMs: number,
  log: Logger,
): ReplicaWait {
  if (store.kind === 'redis') {
    return new RedisReplicaWait(store.redis, settings, lockDurationMs, refreshMs, log);
  }
  if (settings.replicas !== 'auto' && settings.replicas > 0) {
    throw new ConfigError(
      'worker.replicaWait',
      `replicas: ${settings.replicas} is not supported on the postgres backend; use a synchronous standby (synchronous_standby_names) and set replicas: 0`,
    );
  }
  return {
    disabled: true,
    timeoutMs: settings.timeoutMs,
    required: async () => 0,
    recheck: () => undefined,
    start: () => undefined,
    stop: () => undefined,
  };
}

/**
 * The worker's view of its Redis primaries' replicas, read with INFO replication at start, every
 * heartbeat and on every reconnect (a failover brings a primary with other replicas, or none) — never
 * per call.
 */
export class RedisReplicaWait implements ReplicaWait {
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
