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
 */
export class CatalogPublisher {
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = Date.now();
  private stopped = false;
  /** Heartbeats are written one after another, so the last state written is the last state seen. */
  private beats: Promise<void> = Promise.resolve();

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
    this.timer = setInterval(() => this.beat(), this.deps.heartbeatMs);
    this.timer.unref();
    this.beat();
  }

  /** Removes this worker from the catalog; call after the sessions are closed. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopped = true;
    await this.beats;
    const { redis, prefix, workerId } = this.deps;
    await redis.hdel(redisKeys.workers(prefix), workerId).catch(() => undefined);
    await redis.publish(redisKeys.catalogChanged(prefix), workerId).catch(() => undefined);
  }

  private async publishTools(server: string): Promise<void> {
    const session = this.deps.pool.get(server);
    if (!session) return;
    const entry: ServerCatalogEntry = {
      server,
      tools: session.tools,
      ...(session.serverInfo ? { serverInfo: session.serverInfo } : {}),
      publishedBy: this.deps.workerId,
      updatedAt: Date.now(),
    };
    // Announced like a heartbeat, so readers (the /mcp gateway's list_changed) need not wait for the next beat.
    await this.write(async () => {
      await this.deps.redis.hset(redisKeys.catalog(this.deps.prefix), server, JSON.stringify(entry));
      await this.deps.redis.publish(redisKeys.catalogChanged(this.deps.prefix), this.deps.workerId);
    });
  }

  private beat(): void {
    if (this.stopped) return;
    this.beats = this.beats.then(() => this.writeBeat());
  }

  private async writeBeat(): Promise<void> {
    const { redis, prefix, workerId, heartbeatMs, pool } = this.deps;
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
