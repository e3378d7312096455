import {
  type CatalogStore,
  type CatalogTool,
  catalogStoreOf,
  type ServerCatalogEntry,
  type StopListening,
  type Store,
  type WorkerHeartbeat,
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

/** Heartbeats lapsed longer than this are gone for good (and pruned): they never count as recovering. */
const LAPSED_HEARTBEAT_HORIZON_MS = 60_000;

/** What the workers published: each server's tools and who can serve it. Cached for `cacheMs`. */
export class CatalogReader {
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  private readonly catalog: CatalogStore;

  /** `store`: the deployment's queue store, where the workers publish (catalog-store.ts). */
  constructor(
    store: Store,
    private readonly cacheMs = 250,
  ) {
    this.catalog = catalogStoreOf(store);
  }

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

  /**
   * Calls `listener` when the workers announce a change (a wake-up: read again to see what changed).
   * Holds a connection of its own until the returned stop is called.
   */
  onChanged(
    listener: (workerId: string) => void,
    onError?: (error: unknown) => void,
  ): Promise<StopListening> {
    return this.catalog.onChanged(listener, onError);
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
    // Dated when asked, not when answered: a read that sat behind a paused store is stale on arrival.
    const at = Date.now();
    // Workers that died without saying goodbye are forgotten (and removed) after a minute, so the
    // store stays small; until then they count as recovering (availability).
    const { servers, workers } = await this.catalog.read(at - LAPSED_HEARTBEAT_HORIZON_MS);
    return {
      at,
      servers: new Map(servers.map((entry) => [entry.server, entry])),
      workers,
    };
  }
}
