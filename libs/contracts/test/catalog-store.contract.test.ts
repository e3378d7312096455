import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type CatalogStore,
  catalogStoreOf,
  redisKeys,
  type ServerCatalogEntry,
  type SessionState,
  type StopListening,
  type Store,
  type WorkerHeartbeat,
} from '../src/index.ts';
import { contractBackends, type OpenedStore } from './contract-backends.ts';

/** Empties the catalog between tests. */
async function clearCatalog(store: Store): Promise<void> {
  if (store.kind === 'redis') {
    await store.redis.del(redisKeys.catalog(store.prefix), redisKeys.workers(store.prefix));
  } else {
    await store.pool.query('TRUNCATE catalog, worker_heartbeat');
  }
}

const entry = (server: string, tools: string[], publishedBy = 'w1'): ServerCatalogEntry => ({
  server,
  tools: tools.map((name) => ({ name, inputSchema: { type: 'object' } })),
  publishedBy,
  updatedAt: Date.now(),
});

/** A worker's start: the same on every beat, as a real worker's. */
const STARTED_AT = Date.now();

const beat = (
  workerId: string,
  expiresIn: number,
  sessions: Record<string, SessionState>,
): WorkerHeartbeat => {
  const now = Date.now();
  return {
    workerId,
    host: 'test',
    pid: 1,
    startedAt: STARTED_AT,
    beatAt: now,
    expiresAt: now + expiresIn,
    sessions: Object.fromEntries(
      Object.entries(sessions).map(([server, state]) => [server, { state, since: 0, connects: 1 }]),
    ),
  };
};

/** Every announcement a subscription received, with a way to wait for one from a given writer. */
function recorder() {
  const seen: string[] = [];
  const waiters: Array<{ workerId: string; resolve: () => void }> = [];
  return {
    seen,
    listener: (workerId: string) => {
      seen.push(workerId);
      for (const waiter of waiters.filter((candidate) => candidate.workerId === workerId)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    /** Resolves at the next announcement from `workerId` (or at once if one is already in `seen`). */
    next: (workerId: string, alreadySeen = false) =>
      alreadySeen && seen.includes(workerId)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ workerId, resolve })),
  };
}

describe.each(contractBackends)('CatalogStore contract on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let store: Store | undefined;
  let catalog: CatalogStore;
  const stops: StopListening[] = [];

  beforeAll(async () => {
    opened = await backend.open();
    store = opened.store;
    catalog = catalogStoreOf(store);
  });

  beforeEach(async () => {
    if (store) await clearCatalog(store);
  });

  afterAll(async () => {
    for (const stop of stops.splice(0)) await stop().catch(() => undefined);
    await opened?.close();
  });

  it('reads back the tool lists and heartbeats written', async () => {
    const docs = entry('docs', ['search']);
    const alive = beat('w1', 10_000, { docs: 'ready' });
    await catalog.publishTools('docs', docs);
    await catalog.heartbeat(alive);
    const contents = await catalog.read(0);
    expect(contents.servers).toEqual([docs]);
    expect(contents.workers).toEqual([alive]);

    // A session's own list replaces the one stored (its tools/list_changed).
    const newer = entry('docs', ['search', 'fetch'], 'w2');
    await catalog.publishTools('docs', newer);
    expect((await catalog.read(0)).servers).toEqual([newer]);

    await catalog.removeWorker('w1');
    expect((await catalog.read(0)).workers).toEqual([]);
  });

  it('re-publishes only the missing lists, never over a present one', async () => {
    const present = entry('docs', ['search', 'fetch'], 'w2');
    await catalog.publishTools('docs', present);
    expect(await catalog.missingTools(['docs', 'notes', 'files'])).toEqual(['notes', 'files']);
    expect(await catalog.missingTools([])).toEqual([]);

    const notes = entry('notes', ['add_note']);
    const stale = entry('docs', ['search']);
    expect(await catalog.restoreTools([stale, notes])).toEqual(['notes']);
    const servers = (await catalog.read(0)).servers.sort((a, b) => a.server.localeCompare(b.server));
    expect(servers).toEqual([present, notes]);
    expect(await catalog.missingTools(['docs', 'notes'])).toEqual([]);
  });

  it('forgets (and removes) heartbeats expired before the horizon, keeps lapsed recent ones', async () => {
    const now = Date.now();
    await catalog.heartbeat(beat('long-gone', -120_000, { docs: 'ready' }));
    await catalog.heartbeat(beat('stalled', -2_000, { docs: 'ready' }));
    await catalog.heartbeat(beat('alive', 10_000, { docs: 'ready' }));
    const ids = (contents: { workers: WorkerHeartbeat[] }) => contents.workers.map((w) => w.workerId).sort();
    expect(ids(await catalog.read(now - 60_000))).toEqual(['alive', 'stalled']);
    // Read again forgetting nothing: the long-gone heartbeat was removed, not merely left out.
    expect(ids(await catalog.read(0))).toEqual(['alive', 'stalled']);
  });

  it('wakes listeners on a changed heartbeat, a tool list and a leaving worker', async () => {
    if (!store) throw new Error('store not open');
    const changes = recorder();
    stops.push(await catalog.onChanged(changes.listener));

    let announced = changes.next('w1');
    await catalog.heartbeat(beat('w1', 10_000, { docs: 'connecting' }));
    await announced;

    // Only the dates moved: Redis announces every beat, PostgreSQL saves the NOTIFY (§5's commit lock).
    const before = changes.seen.length;
    await catalog.heartbeat(beat('w1', 10_000, { docs: 'connecting' }));
    announced = changes.next('marker');
    await catalog.removeWorker('marker');
    await announced;
    expect(changes.seen.slice(before)).toEqual(backend.name === 'redis' ? ['w1', 'marker'] : ['marker']);

    announced = changes.next('w1');
    await catalog.heartbeat(beat('w1', 10_000, { docs: 'ready' }));
    await announced;

    announced = changes.next('w2');
    await catalog.publishTools('docs', entry('docs', ['search'], 'w2'));
    await announced;

    announced = changes.next('w1');
    await catalog.removeWorker('w1');
    await announced;
  });

  it('announces a worker whose heartbeat had lapsed when it beats again unchanged', async () => {
    const changes = recorder();
    stops.push(await catalog.onChanged(changes.listener));
    let announced = changes.next('w1');
    await catalog.heartbeat(beat('w1', -1_000, { docs: 'ready' }));
    await announced;
    announced = changes.next('w1');
    await catalog.heartbeat(beat('w1', 10_000, { docs: 'ready' }));
    await announced;
  });

  it.runIf(backend.name === 'postgres')(
    'listens again after its connection is killed, and wakes the listener for what it missed',
    async () => {
      if (!opened) throw new Error('store not open');
      const changes = recorder();
      let errors = 0;
      stops.push(await catalog.onChanged(changes.listener, () => errors++));
      const reconnected = changes.next('');
      expect(await opened.cut({ pgSuffix: '/catalog', redisCommand: 'subscribe' })).toBeGreaterThan(0);
      await reconnected;
      expect(errors).toBeGreaterThan(0);
      const announced = changes.next('w9');
      await catalog.heartbeat(beat('w9', 10_000, { docs: 'ready' }));
      await announced;
    },
  );
});
