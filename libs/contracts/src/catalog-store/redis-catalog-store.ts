import type { ServerCatalogEntry, WorkerHeartbeat } from '../catalog.ts';
import { redisKeys } from '../naming.ts';
import type { RedisConnection } from '../redis-connection.ts';
import { subscribeChannels } from '../store/redis/subscribed-connection.ts';
import {
  type CatalogContents,
  type CatalogStore,
  parseCatalogEntry,
  parseHeartbeat,
  type StopListening,
} from './catalog-store.ts';

/** Values of a hash that parse; garbage is skipped, not fatal (a hash anyone can write). */
function parseValues<T>(hash: Record<string, string>, parse: (value: unknown) => T | undefined): T[] {
  return Object.values(hash).flatMap((json) => {
    try {
      const value = parse(JSON.parse(json));
      return value ? [value] : [];
    } catch {
      return [];
    }
  });
}

/**
 * The catalog on Redis: hash `<prefix>:catalog` (server → ServerCatalogEntry JSON), hash
 * `<prefix>:workers` (worker id → WorkerHeartbeat JSON) and the `<prefix>:catalog-changed` channel, whose
 * message is the id of the worker that wrote.
 */
export class RedisCatalogStore implements CatalogStore {
  private readonly catalogKey: string;
  private readonly workersKey: string;
  private readonly channel: string;

  constructor(
    private readonly redis: RedisConnection,
    prefix: string,
  ) {
    this.catalogKey = redisKeys.catalog(prefix);
    this.workersKey = redisKeys.workers(prefix);
    this.channel = redisKeys.catalogChanged(prefix);
  }

  async publishTools(server: string, entry: ServerCatalogEntry): Promise<void> {
    await this.redis.hset(this.catalogKey, server, JSON.stringify(entry));
    await this.redis.publish(this.channel, entry.publishedBy);
  }

  async missingTools(servers: string[]): Promise<string[]> {
    if (servers.length === 0) return [];
    const stored = await this.redis.hmget(this.catalogKey, ...servers);
    return servers.filter((_, index) => stored[index] === null);
  }

  async restoreTools(entries: ServerCatalogEntry[]): Promise<string[]> {
    if (entries.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const entry of entries) pipeline.hsetnx(this.catalogKey, entry.server, JSON.stringify(entry));
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
    const written = entries.filter((_, index) => replies[index]?.[1] === 1).map((entry) => entry.server);
    if (written.length > 0) await this.redis.publish(this.channel, entries[0]?.publishedBy ?? '');
    return written;
  }

  async heartbeat(record: WorkerHeartbeat): Promise<void> {
    // Every beat is announced: pub/sub costs Redis nothing worth saving (PostgreSQL's side differs).
    await this.redis.hset(this.workersKey, record.workerId, JSON.stringify(record));
    await this.redis.publish(this.channel, record.workerId);
  }

  async removeWorker(workerId: string): Promise<void> {
    await this.redis.hdel(this.workersKey, workerId);
    await this.redis.publish(this.channel, workerId);
  }

  async read(forgetBefore: number): Promise<CatalogContents> {
    const [catalog, workers] = await Promise.all([
      this.redis.hgetall(this.catalogKey),
      this.redis.hgetall(this.workersKey),
    ]);
    const beats = parseValues(workers, parseHeartbeat);
    const forgotten = beats.filter((beat) => beat.expiresAt < forgetBefore).map((beat) => beat.workerId);
    if (forgotten.length > 0) await this.redis.hdel(this.workersKey, ...forgotten);
    return {
      servers: parseValues(catalog, parseCatalogEntry),
      workers: beats.filter((beat) => beat.expiresAt >= forgetBefore),
    };
  }

  async onChanged(
    listener: (workerId: string) => void,
    onError?: (error: unknown) => void,
  ): Promise<StopListening> {
    const subscriber = await subscribeChannels(
      this.redis.duplicate(),
      { [this.channel]: listener },
      (error) => onError?.(error),
    );
    return async () => subscriber.disconnect();
  }

  onReconnect(listener: () => void): () => void {
    this.redis.on('ready', listener);
    return () => {
      this.redis.off('ready', listener);
    };
  }
}
