import { hostname } from 'node:os';
import {
  type RedisConnection,
  redisKeys,
  type ServerCatalogEntry,
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
 * A Redis that lost its data (restarted without persistence) forgets the tool lists too, and nothing
 * would write them again until a session reconnects: each beat, and the reconnect itself, also
 * re-writes the list of every ready session that the catalog lacks (one HMGET per beat).
 */
export class CatalogPublisher {
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private stopped = false;
  /** Heartbeats are written one after another, so the last state written is the last state seen. */
  private beats: Promise<void> = Promise.resolve();
  /** A reconnect beats at once: after a Redis restart, the catalog is back before the next interval. */
  private readonly onReady = () => this.beat();

  constructor(
    private readonly deps: {
      pool: SessionPool;
      redis: RedisConnection;
      prefix: string;
      workerId: string;
      heartbeatMs: number;
      /** The port of this worker's /metrics and /health, once it listens; announced for scrapers. */
      httpPort?: () => number | undefined;
      log: Logger;
    },
  ) {}

  start(): void {
    for (const [server, session] of this.deps.pool.sessions) {
      session.on('tools', () => void this.publishTools(server));
      session.on('state', () => this.beat());
    }
    this.deps.redis.on('ready', this.onReady);
    this.timer = setInterval(() => this.beat(), this.deps.heartbeatMs);
    this.timer.unref();
    this.beat();
  }

  /** Removes this worker from the catalog; call after the sessions are closed. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.deps.redis.off('ready', this.onReady);
    this.stopped = true;
    await this.beats;
    const { redis, prefix, workerId } = this.deps;
    await redis.hdel(redisKeys.workers(prefix), workerId).catch(() => undefined);
    await redis.publish(redisKeys.catalogChanged(prefix), workerId).catch(() => undefined);
  }

  private async publishTools(server: string): Promise<void> {
    const entry = this.entryOf(server);
    if (!entry) return;
    // Announced like a heartbeat, so readers (the /mcp gateway's list_changed) need not wait for the next beat.
    await this.write(async () => {
      await this.deps.redis.hset(redisKeys.catalog(this.deps.prefix), server, entry);
      await this.deps.redis.publish(redisKeys.catalogChanged(this.deps.prefix), this.deps.workerId);
    });
  }

  private entryOf(server: string): string | undefined {
    const session = this.deps.pool.get(server);
    if (!session) return undefined;
    const entry: ServerCatalogEntry = {
      server,
      tools: session.tools,
      ...(session.serverInfo ? { serverInfo: session.serverInfo } : {}),
      publishedBy: this.deps.workerId,
      updatedAt: Date.now(),
    };
    return JSON.stringify(entry);
  }

  /**
   * Re-writes the tool list of each ready session whose server the catalog lacks. Only missing entries:
   * a present one may be another worker's newer list (after its `tools/list_changed`).
   */
  private async restoreMissingTools(): Promise<void> {
    const { redis, prefix, pool, log } = this.deps;
    const ready = [...pool.sessions]
      .filter(([, session]) => session.state === 'ready')
      .map(([server]) => server);
    if (ready.length === 0) return;
    const stored = await redis.hmget(redisKeys.catalog(prefix), ...ready);
    const missing = ready.filter((_, index) => stored[index] === null);
    if (missing.length === 0) return;
    const entries = missing.flatMap((server) => {
      const entry = this.entryOf(server);
      return entry ? [server, entry] : [];
    });
    await redis.hset(redisKeys.catalog(prefix), ...entries);
    log.warn(
      { servers: missing },
      'tool lists missing from the catalog (Redis lost its data?): published again',
    );
  }

  private beat(): void {
    if (this.stopped) return;
    this.beats = this.beats.then(() => this.writeBeat());
  }

  private async writeBeat(): Promise<void> {
    const { redis, prefix, workerId, heartbeatMs, pool } = this.deps;
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
    await this.write(async () => {
      await redis.hset(redisKeys.workers(prefix), workerId, JSON.stringify(heartbeat));
      await redis.publish(redisKeys.catalogChanged(prefix), workerId);
    });
  }

  private async write(operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch (error) {
      this.deps.log.warn({ err: error }, 'catalog publish failed; retried on the next heartbeat');
    }
  }
}
