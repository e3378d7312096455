import { randomUUID } from 'node:crypto';
import {
  type CatalogTool,
  parseConfig,
  redisKeys,
  redisStore,
  type SessionState,
} from '@switchyard/contracts';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { CatalogReader } from '../src/catalog/catalog-reader.ts';
import { ModelToolCatalog, type ToolFilter } from '../src/catalog/model-tool-catalog.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const used: string[] = [];
let prefix: string;
let catalog: ModelToolCatalog;

const config = parseConfig({
  servers: {
    notes: { transport: 'stdio', command: 'notes', queueTimeoutMs: 800 },
    search: { transport: 'stdio', command: 'search' },
  },
});
const denyAddNote: ToolFilter[] = [{ allow: ['*'], deny: ['notes__add_note'] }];
const tool = (name: string): CatalogTool => ({ name, inputSchema: { type: 'object' } });

async function heartbeat(server: string, state: SessionState): Promise<void> {
  const now = Date.now();
  const beat = {
    workerId: 'w1',
    host: 'test',
    pid: 1,
    startedAt: now,
    beatAt: now,
    expiresAt: now + 60_000,
    sessions: { [server]: { state, since: now, connects: 1 } },
  };
  await redis.hset(redisKeys.workers(prefix), 'w1', JSON.stringify(beat));
}

async function publish(server: string, tools: CatalogTool[]): Promise<void> {
  const entry = { server, tools, publishedBy: 'w1', updatedAt: Date.now() };
  await redis.hset(redisKeys.catalog(prefix), server, JSON.stringify(entry));
}

/** Issue 8 item 5: a model-facing name maps to exactly one published tool, whatever the catalog's state. */
describe('model tool catalog: name resolution', () => {
  beforeEach(() => {
    prefix = `sy-test-names-${randomUUID().slice(0, 8)}`;
    used.push(prefix);
    catalog = new ModelToolCatalog(
      new CatalogReader(redisStore(redis, prefix), 0),
      config,
      pino({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    for (const done of used) await redis.del(redisKeys.workers(done), redisKeys.catalog(done));
    await redis.quit();
  });

  it('never turns an unlisted name into a denied tool while the catalog is unpublished', async () => {
    await heartbeat('notes', 'connecting');
    const pending = catalog.resolve('notes__add_note__x', denyAddNote);
    // The server publishes its list while the call waits for it: add_note exists, add_note__x does not.
    await publish('notes', [tool('add_note'), tool('list_notes')]);
    const resolution = await pending;
    expect(resolution.tool).toBeUndefined();
    expect(resolution.refused).toMatchObject({ status: 'failed', code: 'unknown_or_disallowed_tool' });
  });

  it('applies the filters to the resolved tool and refuses unknown names', async () => {
    await heartbeat('notes', 'ready');
    await publish('notes', [tool('add_note'), tool('list_notes'), tool('add_note__x')]);
    expect((await catalog.resolve('notes__list_notes', denyAddNote)).tool).toMatchObject({
      server: 'notes',
      tool: 'list_notes',
    });
    // A tool really named add_note__x is a different tool from add_note: the deny of add_note is exact.
    expect((await catalog.resolve('notes__add_note__x', denyAddNote)).tool).toMatchObject({
      server: 'notes',
      tool: 'add_note__x',
    });
    for (const name of ['notes__add_note', 'notes__nope', 'nope__add_note', '__add_note', 'notes']) {
      expect((await catalog.resolve(name, denyAddNote)).refused, name).toMatchObject({
        status: 'failed',
        code: 'unknown_or_disallowed_tool',
      });
    }
  });

  it('refuses at once when no worker serves the server, and after queueTimeoutMs when it never publishes', async () => {
    expect((await catalog.resolve('search__search', [])).refused).toMatchObject({
      status: 'unavailable',
      code: 'no_worker',
      server: 'search',
    });
    await heartbeat('notes', 'connecting');
    const started = Date.now();
    expect((await catalog.resolve('notes__add_note', [])).refused).toMatchObject({
      status: 'unavailable',
      code: 'catalog_unpublished',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });

  it('stops waiting for the list when the run stops', async () => {
    await heartbeat('notes', 'connecting');
    const stop = new AbortController();
    const pending = catalog.resolve('notes__add_note', [], stop.signal);
    stop.abort();
    expect((await pending).refused).toMatchObject({ code: 'catalog_unpublished' });
  });
});
