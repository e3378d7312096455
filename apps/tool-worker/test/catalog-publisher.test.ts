import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  catalogStoreOf,
  closeStore,
  openStore,
  redisKeys,
  redisStore,
  type Store,
} from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CatalogPublisher } from '../src/catalog/catalog-publisher.ts';
import type { Logger } from '../src/runtime/logger.ts';
import type { SessionPool } from '../src/sessions/session-pool.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const prefix = `sy-test-catalog-${randomUUID().slice(0, 8)}`;
const quiet = (): undefined => undefined;
const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => log } as unknown as Logger;
const reader = new Redis(REDIS_URL);
const catalog = redisKeys.catalog(prefix);

/** A ready session to `search` with one tool: what the publisher reads of a real one. */
function readyPool(): SessionPool {
  const session = Object.assign(new EventEmitter(), {
    state: 'ready',
    tools: [{ name: 'search', inputSchema: { type: 'object' } }],
    serverInfo: { name: 'search', version: '1.0.0' },
  });
  const sessions = new Map([['search', session]]);
  return {
    sessions,
    get: (server: string) => sessions.get(server),
    statuses: () => ({}),
  } as unknown as SessionPool;
}

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop().catch(() => undefined);
});
afterAll(async () => {
  const keys = await reader.keys(`${prefix}:*`);
  if (keys.length > 0) await reader.del(...keys);
  await reader.quit();
});

/**
 * Resolves once the first publications are done: the first beat writes its heartbeat after its
 * catalog check, on the connection the session's tools/list went out on before it.
 */
async function firstPublications(): Promise<void> {
  await vi.waitFor(
    async () => {
      expect(await reader.hget(catalog, 'search')).not.toBeNull();
      expect(await reader.hget(redisKeys.workers(prefix), 'w-test')).not.toBeNull();
    },
    { timeout: 5_000, interval: 20 },
  );
}

function publisher(heartbeatMs: number) {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const pool = readyPool();
  const catalogPublisher = new CatalogPublisher({
    pool,
    store: redisStore(redis, prefix),
    workerId: 'w-test',
    heartbeatMs,
    log,
  });
  stops.push(async () => {
    await catalogPublisher.stop();
    redis.disconnect();
  });
  catalogPublisher.start();
  // The session's first tools/list, as a real session announces it.
  pool.get('search')?.emit('tools', []);
  return { redis };
}

describe('catalog publisher after Redis lost the catalog', () => {
  it('writes a missing tool list again on the next heartbeat', async () => {
    publisher(100);
    await firstPublications();
    await reader.del(catalog);
    await vi.waitFor(
      async () => {
        const entry = JSON.parse((await reader.hget(catalog, 'search')) ?? '{}');
        expect(entry).toMatchObject({ server: 'search', publishedBy: 'w-test', tools: [{ name: 'search' }] });
      },
      { timeout: 5_000, interval: 20 },
    );
  });

  it('writes it again at once when its connection comes back, without waiting for a beat', async () => {
    // No beat comes within this test: only the reconnect can restore the entry.
    const { redis } = publisher(600_000);
    await firstPublications();
    await reader.del(catalog);
    redis.disconnect(true);
    await vi.waitFor(async () => expect(await reader.hget(catalog, 'search')).not.toBeNull(), {
      timeout: 5_000,
      interval: 20,
    });
  });
});

describe('catalog publisher on PostgreSQL', () => {
  let store: Store | undefined;

  beforeAll(async () => {
    store = await openStore({
      choice: { backend: 'postgres', reason: 'test' },
      prefix: `t_${randomUUID().slice(0, 8)}`,
      redis: { url: '' },
      databaseUrl: DATABASE_URL,
      connectionName: 'switchyard-test-catalog-publisher',
    });
  });

  afterAll(async () => {
    if (store?.kind !== 'postgres') return;
    try {
      await store.pool.query(`DROP SCHEMA ${store.schema} CASCADE`);
    } finally {
      await closeStore(store);
    }
  });

  it('publishes, writes a lost tool list again on the next heartbeat, and leaves on stop', async () => {
    if (store?.kind !== 'postgres') throw new Error('postgres store not open');
    const pool = readyPool();
    const catalogPublisher = new CatalogPublisher({ pool, store, workerId: 'w-pg', heartbeatMs: 100, log });
    stops.push(() => catalogPublisher.stop());
    catalogPublisher.start();
    pool.get('search')?.emit('tools', []);
    const catalog = catalogStoreOf(store);
    const published = async () => {
      const contents = await catalog.read(0);
      expect(contents.servers).toMatchObject([{ server: 'search', publishedBy: 'w-pg' }]);
      expect(contents.workers).toMatchObject([{ workerId: 'w-pg' }]);
    };
    await vi.waitFor(published, { timeout: 5_000, interval: 20 });
    await store.pool.query('TRUNCATE catalog');
    await vi.waitFor(published, { timeout: 5_000, interval: 20 });
    await catalogPublisher.stop();
    expect((await catalog.read(0)).workers).toEqual([]);
  });
});
