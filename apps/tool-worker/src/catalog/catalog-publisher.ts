import { hostname } from 'node:os';
import {
  type CatalogStore,
  catalogStoreOf,
  type ServerCatalogEntry,
  type Store,
  type WorkerHeartbeat,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { SessionPool } from '../sessions/session-pool.ts';

/** A worker silent for this many heartbeats counts as gone. */
const MISSED_BEATS_ALLOWED = 3;

/**
 * Publishes what the orchestrator needs to build the model's tools: each server's tools/list
 * (on connect and on `tools/list_changed`) and this worker's session states (on every change and on
 * a heartbeat, so a worker that dies silently disappears within three beats).
 * A store that lost its data (Redis restarted without persistence, a restored database) forgets the
 * tool lists too, and nothing would write them again until a session reconnects: each beat, and a Redis
 * reconnect itself, also re-writes the list of every ready session that the catalog lacks (one lookup
 * per beat).
 */
export class CatalogPublisher {
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private stopped = false;
  /** Heartbeats are written one after another, so the last state written is the last state seen. */
  private beats: Promise<void> = Promise.resolve();
  /** A reconnect beats at once: after a Redis restart, the catalog is back before the next interval. */
  private stopReconnects: (() => void) | undefined;
  private readonly catalog: CatalogStore;

  constructor(
    private readonly deps: {
      pool: SessionPool;
      /** The queue store; the catalog lives next to the queues. */
      store: Store;
      workerId: string;
      heartbeatMs: number;
      /** The port of this worker's /metrics and /health, once it listens; announced for scrapers. */
      httpPort?: () => number | undefined;
      log: Logger;
    },
  ) {
    this.catalog = catalogStoreOf(deps.store);
  }

  start(): void {
    for (const [server, session] of this.deps.pool.sessions) {
      session.on('tools', () => void this.publishTools(server));
      session.on('state', () => this.beat());
    }
    this.stopReconnects = this.catalog.onReconnect(() => this.beat());
    this.timer = setInterval(() => this.beat(), this.deps.heartbeatMs);
    this.timer.unref();
    this.beat();
  }

  /** Removes this worker from the catalog; call after the sessions are closed. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopReconnects?.();
    this.stopped = true;
    await this.beats;
    await this.catalog.removeWorker(this.deps.workerId).catch(() => undefined);
  }

  private async publishTools(server: string): Promise<void> {
    const entry = this.entryOf(server);
    if (!entry) return;
    // Announced like a heartbeat, so readers (the /mcp gateway's list_changed) need not wait for the next beat.
    await this.write(() => this.catalog.publishTools(server, entry));
  }

  private entryOf(server: string): ServerCatalogEntry | undefined {
    const session = this.deps.pool.get(server);
    if (!session) return undefined;
    const entry: ServerCatalogEntry = {
      server,
      tools: session.tools,
      ...(session.serverInfo ? { serverInfo: session.serverInfo } : {}),
      publishedBy: this.deps.workerId,
      updatedAt: Date.now(),
    };
    return entry;
  }

  /**
   * Re-writes the tool list of each ready session whose server the catalog lacks. Only missing entries:
   * a present one may be another worker's newer list (after its `tools/list_changed`).
   */
  private async restoreMissingTools(): Promise<void> {
    const { pool, log } = this.deps;
    const ready = [...pool.sessions]
      .filter(([, session]) => session.state === 'ready')
      .map(([server]) => server);
    const missing = await this.catalog.missingTools(ready);
    if (missing.length === 0) return;
    const entries = missing.flatMap((server) => this.entryOf(server) ?? []);
    const restored = await this.catalog.restoreTools(entries);
    if (restored.length === 0) return;
    log.warn(
      { servers: restored },
      'tool lists missing from the catalog (the store lost its data?): published again',
    );
  }

  private beat(): void {
    if (this.stopped) return;
    this.beats = this.beats.then(() => this.writeBeat());
  }

  private async writeBeat(): Promise<void> {
    const { workerId, heartbeatMs, pool } = this.deps;
    // Before the heartbeat, whose announcement then tells readers of both.
    await this.write(() => this.restoreMissingTools());
    const now = Date.now();
    const httpPort = this.deps.httpPort?.();
    const heartbeat: WorkerHeartbeat = {
      workerId,
      host: hostname(),
      pid: process.pid,
      ...(httpPort !== undefined ? { httpPort } : {}),
      startedAt: this.startedAt,
      beatAt: now,
      expiresAt: now + heartbeatMs * MISSED_BEATS_ALLOWED,
      sessions: pool.statuses(),
    };
    await this.write(() => this.catalog.heartbeat(heartbeat));
  }

  private async write(operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch (error) {
      this.deps.log.warn({ err: error }, 'catalog publish failed; retried on the next heartbeat');
    }
  }
}
