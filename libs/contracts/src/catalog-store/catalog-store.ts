import {
  type ServerCatalogEntry,
  ServerCatalogEntrySchema,
  type WorkerHeartbeat,
  WorkerHeartbeatSchema,
} from '../catalog.ts';

/** What the workers published, as a reader sees it. */
export interface CatalogContents {
  /** One tool list per server, as the last worker that listed it saw it. */
  servers: ServerCatalogEntry[];
  /** Heartbeats, live and lapsed, except those the read forgot (and removed). */
  workers: WorkerHeartbeat[];
}

/** Stops a subscription and closes its connection. */
export type StopListening = () => Promise<void>;

/**
 * The fleet's tool catalog and worker heartbeats (docs/postgres-backend.md §2): tool workers write
 * them, orchestrators read them and are woken when they change. Redis keeps two hashes and a pub/sub
 * channel; PostgreSQL two tables of the queue schema and a NOTIFY channel.
 */
export interface CatalogStore {
  /** Writes `server`'s tool list as a session just listed it (replacing any), and announces it. */
  publishTools(server: string, entry: ServerCatalogEntry): Promise<void>;
  /** Of `servers`, those whose tool list the catalog lacks (the store lost its data, or never had it). */
  missingTools(servers: string[]): Promise<string[]>;
  /**
   * Writes the lists the catalog lacks and announces them; a list present by now is kept, since it may
   * be another worker's newer one (after its `tools/list_changed`). Returns the servers written.
   */
  restoreTools(entries: ServerCatalogEntry[]): Promise<string[]>;
  /** Writes a worker's heartbeat and wakes the readers (on PostgreSQL only when more than its dates changed). */
  heartbeat(record: WorkerHeartbeat): Promise<void>;
  /** Removes a leaving worker's heartbeat and wakes the readers. */
  removeWorker(workerId: string): Promise<void>;
  /**
   * The tool lists and heartbeats; heartbeats that expired before `forgetBefore` (epoch ms) are left
   * out and removed, so dead workers do not pile up.
   */
  read(forgetBefore: number): Promise<CatalogContents>;
  /**
   * Calls `listener` when something may have changed (a wake-up: the reader re-reads), with the id of
   * the worker that wrote, or '' for a wake-up after the subscription's connection came back (changes
   * meanwhile were not announced). Connection failures are reported to `onError` and retried; resolves
   * once listening (or once the first attempt failed).
   */
  onChanged(listener: (workerId: string) => void, onError?: (error: unknown) => void): Promise<StopListening>;
  /**
   * Calls `listener` when the store's connection comes back, since a store that restarted empty may
   * need the catalog written again at once. Returns the unsubscribe.
   */
  onReconnect(listener: () => void): () => void;
}

/** A stored tool list, or undefined for one that does not parse (never trusted blindly: any writer). */
export function parseCatalogEntry(value: unknown): ServerCatalogEntry | undefined {
  return ServerCatalogEntrySchema.safeParse(value).data;
}

export function parseHeartbeat(value: unknown): WorkerHeartbeat | undefined {
  return WorkerHeartbeatSchema.safeParse(value).data;
}
