import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OutcomeNotice, outcomeNotices, type StopReading } from '../src/index.ts';
import { notificationChannel } from '../src/store/postgres/notification-channel.ts';
import { SWEEP_OUTCOMES_SQL } from '../src/store/postgres/outcome-notices-postgres.ts';
import {
  Collected,
  contractBackends,
  DATABASE_URL,
  type OpenedStore,
  postgresBackend,
} from './contract-backends.ts';

const notice = (id: string): OutcomeNotice => ({ queue: 'tools.{notes}', id, outcome: `{"id":"${id}"}` });

describe.each(contractBackends)('OutcomeNotices on $name', (backend) => {
  let opened: OpenedStore;
  const stops: StopReading[] = [];
  beforeAll(async () => {
    opened = await backend.open();
  });
  afterAll(async () => {
    for (const stop of stops) await stop().catch(() => undefined);
    await opened?.close();
  });

  async function reader(errors: unknown[] = []) {
    const read = new Collected<OutcomeNotice>();
    stops.push(await outcomeNotices(opened.store).listen(read.push, (error) => errors.push(error)));
    return read;
  }

  it('hands every replica each notice announced after it started, in order, and none from before', async () => {
    const notices = outcomeNotices(opened.store);
    await notices.announce(notice('before'));
    const [first, second] = [await reader(), await reader()];
    await notices.announce(notice('a'));
    await notices.announce({ queue: 'tools.{notes}', id: 'b', failedReason: 'stalled' });
    for (const read of [first, second]) {
      await read.wait((items) => items.length >= 2);
      expect(read.items).toEqual([notice('a'), { queue: 'tools.{notes}', id: 'b', failedReason: 'stalled' }]);
    }
  });

  it('refuses a notice that carries neither an outcome nor a reason', async () => {
    await expect(
      outcomeNotices(opened.store).announce({ queue: 'q', id: 'x' } as OutcomeNotice),
    ).rejects.toThrow();
  });

  it('resumes after its cursor when its connection is cut: nothing missed, nothing twice', async () => {
    const errors: unknown[] = [];
    const read = await reader(errors);
    const notices = outcomeNotices(opened.store);
    await notices.announce(notice('r1'));
    await read.wait((items) => items.length >= 1);
    expect(await opened.cut({ pgSuffix: '/outcomes', redisCommand: 'xread' })).toBeGreaterThan(0);
    // Announced while the reader is away: PostgreSQL's notifications are lost, Redis's XREAD is cut.
    await notices.announce(notice('r2'));
    await notices.announce(notice('r3'));
    await read.wait((items) => items.length >= 3, 15_000);
    await notices.announce(notice('r4'));
    await read.wait((items) => items.length >= 4);
    expect(read.items.map((item) => item.id)).toEqual(['r1', 'r2', 'r3', 'r4']);
    // ioredis re-sends the cut XREAD by itself; PostgreSQL's listener reports the loss it recovered from.
    if (backend.name === 'postgres') expect(errors.length).toBeGreaterThan(0);
  });
});

describe('OutcomeNotices on postgres only', () => {
  let opened: OpenedStore;
  let stop: StopReading | undefined;
  const other = new pg.Client({ connectionString: DATABASE_URL });
  beforeAll(async () => {
    opened = await postgresBackend.open();
    await other.connect();
  });
  afterAll(async () => {
    await stop?.().catch(() => undefined);
    await other.end().catch(() => undefined);
    await opened?.close();
  });

  it('reads a notice whose id was taken before a later one committed first', async () => {
    const { store } = opened;
    if (store.kind !== 'postgres') throw new Error('postgres expected');
    const read = new Collected<OutcomeNotice>();
    stop = await outcomeNotices(store).listen(read.push, () => undefined);
    // Takes the next id and holds its commit, as a slow concurrent announce would.
    await other.query('BEGIN');
    await other.query(`INSERT INTO ${store.schema}.outcome_notice (body) VALUES ($1::jsonb) RETURNING id`, [
      JSON.stringify(notice('slow')),
    ]);
    await outcomeNotices(store).announce(notice('fast'));
    await read.wait((items) => items.length >= 1);
    await other.query(`SELECT pg_notify($1, 'late')`, [notificationChannel(store.schema, 'outcomes')]);
    await other.query('COMMIT');
    await read.wait((items) => items.length >= 2);
    expect(read.items.map((item) => item.id)).toEqual(['fast', 'slow']);
  });

  it('sweeps notices past the age bound and beyond the length bound, and only those', async () => {
    const { store } = opened;
    if (store.kind !== 'postgres') throw new Error('postgres expected');
    await store.pool.query('DELETE FROM outcome_notice');
    const now = Date.now();
    // Five old, then five fresh: the age bound keeps the fresh ones.
    for (const [index, age] of [20, 19, 18, 17, 16, 0, 0, 0, 0, 0].entries()) {
      await store.pool.query('INSERT INTO outcome_notice (body, created_at_ms) VALUES ($1::jsonb, $2)', [
        JSON.stringify(notice(`n${index}`)),
        now - age * 60_000,
      ]);
    }
    await store.pool.query(SWEEP_OUTCOMES_SQL, [10 * 60_000, 1_000]);
    const left = await store.pool.query<{ id: string }>(
      "SELECT body->>'id' AS id FROM outcome_notice ORDER BY id",
    );
    expect(left.rows.map((row) => row.id)).toEqual(['n5', 'n6', 'n7', 'n8', 'n9']);
    await store.pool.query(SWEEP_OUTCOMES_SQL, [10 * 60_000, 2]);
    const capped = await store.pool.query<{ id: string }>(
      "SELECT body->>'id' AS id FROM outcome_notice ORDER BY id",
    );
    expect(capped.rows.map((row) => row.id)).toEqual(['n8', 'n9']);
  });
});
