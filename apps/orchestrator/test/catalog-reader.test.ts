import { randomUUID } from 'node:crypto';
import {
  redisKeys,
  redisStore,
  type ServerCatalogEntry,
  type SessionState,
  type WorkerHeartbeat,
} from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { CatalogReader } from '../src/catalog/catalog-reader.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
let prefix: string;
const used: string[] = [];

const beat = (
  workerId: string,
  expiresIn: number,
  sessions: Record<string, SessionState>,
): WorkerHeartbeat => ({
  workerId,
  host: 'test',
  pid: 1,
  startedAt: 0,
  beatAt: Date.now(),
  expiresAt: Date.now() + expiresIn,
  sessions: Object.fromEntries(
    Object.entries(sessions).map(([server, state]) => [server, { state, since: 0, connects: 1 }]),
  ),
});

const publish = async (...beats: WorkerHeartbeat[]) => {
  for (const entry of beats)
    await redis.hset(redisKeys.workers(prefix), entry.workerId, JSON.stringify(entry));
};

/** What the workers wrote to Redis, read back as availability and tools (real Redis, per-test prefix). */
describe('catalog reader', () => {
  beforeEach(() => {
    prefix = `sy-test-catalog-${randomUUID().slice(0, 8)}`;
    used.push(prefix);
  });

  afterAll(async () => {
    for (const done of used) await redis.del(redisKeys.workers(done), redisKeys.catalog(done));
    await redis.quit();
  });

  it('tells ready, recovering and unserved servers apart', async () => {
    await publish(
      beat('a', 10_000, { docs: 'ready', notes: 'reconnecting' }),
      beat('b', 10_000, { notes: 'degraded', files: 'closed' }),
      beat('gone', -40_000, { files: 'ready' }),
    );
    const reader = new CatalogReader(redisStore(redis, prefix), 0);
    expect(await reader.availability('docs', 30_000)).toBe('ready');
    expect(await reader.availability('notes', 30_000)).toBe('recovering');
    expect(await reader.availability('files', 30_000)).toBe('none');
    expect(await reader.availability('unknown', 30_000)).toBe('none');
  });

  it('waits for workers whose heartbeats lapsed moments ago (a paused Redis), not for long-gone ones', async () => {
    await publish(beat('stalled', -2_000, { docs: 'ready' }), beat('gone', -40_000, { files: 'ready' }));
    const reader = new CatalogReader(redisStore(redis, prefix), 0);
    expect(await reader.availability('docs', 30_000)).toBe('recovering');
    expect(await reader.availability('docs', 1_000)).toBe('none');
    expect(await reader.availability('files', 30_000)).toBe('none');
    expect(await reader.liveWorkers()).toEqual([]);
  });

  it('opens the circuit once every session has been reconnecting longer than the limit', async () => {
    const since = (ago: number) => ({ since: Date.now() - ago });
    const down = beat('a', 10_000, { docs: 'reconnecting' });
    (down.sessions.docs as { since: number }).since = since(60_000).since;
    const fresh = beat('b', 10_000, { docs: 'reconnecting' });
    (fresh.sessions.docs as { since: number }).since = since(1_000).since;
    await publish(down);
    const reader = new CatalogReader(redisStore(redis, prefix), 0);
    expect(await reader.availability('docs', 30_000)).toBe('down');
    expect(await reader.availability('docs')).toBe('recovering');
    await publish(fresh);
    expect(await reader.availability('docs', 30_000)).toBe('recovering');
  });

  it('finds a tool in a published tools/list and ignores garbage entries', async () => {
    const entry: ServerCatalogEntry = {
      server: 'docs',
      tools: [{ name: 'search', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
      publishedBy: 'a',
      updatedAt: Date.now(),
    };
    await redis.hset(redisKeys.catalog(prefix), 'docs', JSON.stringify(entry), 'broken', '{not json');
    const reader = new CatalogReader(redisStore(redis, prefix), 0);
    expect(await reader.tool('docs', 'search')).toMatchObject({ annotations: { readOnlyHint: true } });
    expect(await reader.tool('docs', 'missing')).toBeUndefined();
    expect([...(await reader.entries()).keys()]).toEqual(['docs']);
  });

  it('prunes workers dead for over a minute', async () => {
    await publish(beat('long-gone', -120_000, { docs: 'ready' }), beat('alive', 10_000, { docs: 'ready' }));
    await new CatalogReader(redisStore(redis, prefix), 0).liveWorkers();
    expect(await redis.hkeys(redisKeys.workers(prefix))).toEqual(['alive']);
  });
});
