import {
  type CatalogTool,
  type RedisConnection,
  redisKeys,
  type ServerCatalogEntry,
  ServerCatalogEntrySchema,
  type WorkerHeartbeat,
  WorkerHeartbeatSchema,
} from '@switchyard/contracts';

/**
 * `ready`: a live worker holds a ready session. `recovering`: live workers serve it but none is ready
 * right now (connecting, degraded, reconnecting): calls wait. `down`: every session has been
 * reconnecting for longer than the server's `unavailableAfterMs` (the circuit is open).
 * `none`: no worker serves it, nor did one whose heartbeat lapsed less than `unavailableAfterMs` ago.
 */
export type ServerAvailability = 'ready' | 'recovering' | 'down' | 'none';

interface Snapshot {
  at: number;
  servers: Map<string, ServerCatalogEntry>;
  workers: WorkerHeartbeat[];
}

function parseEntries<T>(hash: Record<string, string>, parse: (value: unknown) => T | undefined): T[] {
  return Object.values(hash).flatMap((json) => {
    try {
      const value = parse(JSON.parse(json));
      return value ? [value] : [];
    } catch {
      return [];
    }
  });
}

/** Heartbeats lapsed longer than this are gone for good (and pruned): they never count as recovering. */
const LAPSED_HEARTBEAT_HORIZON_MS = 60_000;

/** What the workers published: each server's tools and who can serve it. Cached for `cacheMs`. */
export class CatalogReader {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly cacheMs = 250,
  ) {}

  async entries(): Promise<Map<string, ServerCatalogEntry>> {
    return (await this.read()).servers;
  }

  async tool(server: string, tool: string): Promise<CatalogTool | undefined> {
    return (await this.read()).servers.get(server)?.tools.find((candidate) => candidate.name === tool);
  }

  async liveWorkers(): Promise<WorkerHeartbeat[]> {
    const now = Date.now();
    return (await this.read()).workers.filter((beat) => beat.expiresAt >= now);
  }

  async availability(
    server: string,
    unavailableAfterMs = Number.POSITIVE_INFINITY,
  ): Promise<ServerAvailability> {
    const now = Date.now();
    let serving = false;
    let recovering = false;
    for (const beat of (await this.read()).workers) {
      const status = beat.sessions[server];
      if (!status || status.state === 'closed') continue;
      if (beat.expiresAt < now) {
        // A worker that leaves removes its heartbeat; one that merely lapsed was most likely stalled, or
        // Redis was (a paused Redis lapses every heartbeat at once). Calls wait for it, like for a
        // reconnecting session, until the circuit's limit.
        if (now - beat.expiresAt < Math.min(unavailableAfterMs, LAPSED_HEARTBEAT_HORIZON_MS)) {
          serving = true;
          recovering = true;
        }
        continue;
      }
      if (status.state === 'ready') return 'ready';
      serving = true;
      if (status.state !== 'reconnecting' || now - status.since < unavailableAfterMs) recovering = true;
    }
    if (!serving) return 'none';
    return recovering ? 'recovering' : 'down';
  }

  /** The most recent error any live worker reports for its session to `server`. */
  async lastError(server: string): Promise<string | undefined> {
    const errors = (await this.liveWorkers()).flatMap((beat) => {
      const status = beat.sessions[server];
      return status?.lastError ? [{ at: status.since, error: status.lastError }] : [];
    });
    return errors.sort((a, b) => b.at - a.at)[0]?.error;
  }

  /** Drops the cache, e.g. after a worker was seen leaving. */
  invalidate(): void {
    this.snapshot = undefined;
  }

  private async read(): Promise<Snapshot> {
    if (this.snapshot && Date.now() - this.snapshot.at < this.cacheMs) return this.snapshot;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    this.snapshot = await this.loading;
    return this.snapshot;
  }

  private async load(): Promise<Snapshot> {
    // Dated when asked, not when answered: a read that sat behind a paused Redis is stale on arrival.
    const at = Date.now();
    const [catalog, workers] = await Promise.all([
      this.redis.hgetall(redisKeys.catalog(this.prefix)),
      this.redis.hgetall(redisKeys.workers(this.prefix)),
    ]);
    const entries = parseEntries(catalog, (value) => ServerCatalogEntrySchema.safeParse(value).data);
    const beats = parseEntries(workers, (value) => WorkerHeartbeatSchema.safeParse(value).data);
    await this.pruneDead(beats);
    return {
      at,
      servers: new Map(entries.map((entry) => [entry.server, entry])),
      workers: beats,
    };
  }

  /** Workers that died without saying goodbye are removed after a minute, so the hash stays small. */
  private async pruneDead(beats: WorkerHeartbeat[]): Promise<void> {
    const cutoff = Date.now() - LAPSED_HEARTBEAT_HORIZON_MS;
    const dead = beats.filter((beat) => beat.expiresAt < cutoff).map((beat) => beat.workerId);
    if (dead.length > 0) await this.redis.hdel(redisKeys.workers(this.prefix), ...dead);
  }
}
