import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_CLOCK_SQL, ServerClock, type Store, storeTime } from '../src/index.ts';
import { contractBackends, type OpenedStore } from './contract-backends.ts';

/** The server's time read directly, in epoch ms. */
async function serverNow(store: Store): Promise<number> {
  if (store.kind === 'redis') {
    const [seconds, micros] = await store.redis.time();
    return Number(seconds) * 1000 + Number(micros) / 1000;
  }
  const { rows } = await store.pool.query<{ micros: string }>(POSTGRES_CLOCK_SQL);
  return Number(rows[0]?.micros) / 1000;
}

describe.each(contractBackends)('ServerClock contract on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let store: Store | undefined;

  beforeAll(async () => {
    opened = await backend.open();
    store = opened.store;
  });

  afterAll(async () => {
    await opened?.close();
  });

  it("measures a skewed host's offset against the server's clock and reads the server's time", async () => {
    if (!store) throw new Error('store not open');
    // This host pretends to be 400 s ahead; the server shares the machine's real clock.
    const skewMs = 400_000;
    const clock = ServerClock.of(store, { wall: () => Date.now() + skewMs });
    const sample = await clock.sync();
    expect(clock.synced).toBe(true);
    const tolerance = sample.rttMs + 5;
    expect(Math.abs(sample.offsetMs + skewMs)).toBeLessThanOrEqual(tolerance);

    const before = await serverNow(store);
    const reading = clock.now();
    const after = await serverNow(store);
    expect(reading).toBeGreaterThanOrEqual(Math.floor(before) - tolerance);
    expect(reading).toBeLessThanOrEqual(Math.ceil(after) + tolerance);
  });

  it('reads the time source as seconds and microseconds', async () => {
    if (!store) throw new Error('store not open');
    const [seconds, micros] = await storeTime(store)();
    expect(Number(micros)).toBeGreaterThanOrEqual(0);
    expect(Number(micros)).toBeLessThan(1_000_000);
    expect(Math.abs(Number(seconds) * 1000 - Date.now())).toBeLessThan(5_000);
  });
});
