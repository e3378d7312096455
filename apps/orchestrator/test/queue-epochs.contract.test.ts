import { prepareQueueSchema, redisKeys, type Store } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contractBackends,
  type OpenedStore,
  postgresBackend,
} from '../../../libs/contracts/test/contract-backends.ts';
import { QueueEpochs, RUNS_SLOT } from '../src/jobs/queue-epochs.ts';

/** How each backend loses its queues' data, behind the port's back. */
function losses(store: Store) {
  if (store.kind === 'redis') {
    return {
      /** One slot's data gone (a Redis Cluster shard failed over to a replica that never had it). */
      slot: async (tag: string) => {
        await store.redis.del(redisKeys.epoch(store.prefix, tag));
      },
      /** Everything gone (a restart without persistence, FLUSHALL). */
      everything: async () => {
        const keys = await store.redis.keys(`${store.prefix}:*`);
        if (keys.length > 0) await store.redis.del(...keys);
      },
      stored: async (tag: string) => store.redis.get(redisKeys.epoch(store.prefix, tag)),
    };
  }
  return {
    slot: async (tag: string) => {
      await store.pool.query('DELETE FROM epoch WHERE tag = $1', [tag]);
    },
    /** The queue schema dropped and made again, as a start-up after a restore without it does. */
    everything: async () => {
      await store.pool.query(`DROP SCHEMA ${store.schema} CASCADE`);
      await prepareQueueSchema(store);
    },
    stored: async (tag: string) => {
      const { rows } = await store.pool.query<{ epoch: string }>('SELECT epoch FROM epoch WHERE tag = $1', [
        tag,
      ]);
      return rows[0]?.epoch ?? null;
    },
  };
}

describe.each(contractBackends)('QueueEpochs on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let store: Store;
  let lose: ReturnType<typeof losses>;

  beforeAll(async () => {
    opened = await backend.open();
    store = opened.store;
    lose = losses(store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('creates one epoch per slot that every replica agrees on, even when they all ask at once', async () => {
    const replicas = Array.from({ length: 6 }, () => new QueueEpochs(store));
    const readings = await Promise.all(replicas.map((replica) => replica.read('notes')));
    const first = readings[0];
    for (const reading of readings) {
      expect(reading).toEqual({ epoch: first?.epoch, changed: true, lost: false });
    }
    expect(await lose.stored('notes')).toBe(first?.epoch);
    expect(await replicas[0]?.read('notes')).toEqual({
      epoch: first?.epoch,
      changed: false,
      lost: false,
      previous: first?.epoch,
    });
    // Another slot has its own epoch.
    expect((await replicas[0]?.read(RUNS_SLOT))?.epoch).not.toBe(first?.epoch);
  });

  it('reports a slot whose data was lost, with the epoch seen before, to every replica', async () => {
    const one = new QueueEpochs(store);
    const two = new QueueEpochs(store);
    const before = await one.read('search');
    expect((await two.read('search')).epoch).toBe(before.epoch);
    const other = await one.read('files');

    await lose.slot('search');
    const after = await one.read('search');
    expect(after).toMatchObject({ changed: true, lost: true, previous: before.epoch });
    expect(after.epoch).not.toBe(before.epoch);
    expect(await two.read('search')).toMatchObject({
      epoch: after.epoch,
      lost: true,
      previous: before.epoch,
    });
    // The slot that kept its data kept its epoch.
    expect(await one.read('files')).toMatchObject({ epoch: other.epoch, changed: false, lost: false });
  });

  it('reports every slot lost when the whole store lost its data', async () => {
    const epochs = new QueueEpochs(store);
    const runs = await epochs.read(RUNS_SLOT);
    const notes = await epochs.read('notes');
    await lose.everything();
    expect(await epochs.read(RUNS_SLOT)).toMatchObject({ lost: true, previous: runs.epoch });
    expect(await epochs.read('notes')).toMatchObject({ lost: true, previous: notes.epoch });
  });

  it('gives a dispatch the epoch last read without asking again, and reads one when none was', async () => {
    const epochs = new QueueEpochs(store);
    const fresh = await epochs.forDispatch('mail');
    expect(fresh).toBe(await lose.stored('mail'));
    const read = await epochs.read('mail');
    expect(read.epoch).toBe(fresh);
    // Stale on purpose: the loss shows at the next read, not in what a dispatch records meanwhile.
    await lose.slot('mail');
    expect(await epochs.forDispatch('mail')).toBe(fresh);
    expect((await epochs.read('mail')).lost).toBe(true);
  });
});

/**
 * PostgreSQL only: the read's INSERT waits for another replica's uncommitted insert of the same slot,
 * and the statement's snapshot cannot see that row once it commits. The read must come back with it.
 */
describe('QueueEpochs on postgres, racing a replica that is creating the slot', () => {
  let opened: OpenedStore | undefined;

  beforeAll(async () => {
    opened = await postgresBackend.open();
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('answers the epoch the other replica committed', async () => {
    const store = opened?.store;
    if (store?.kind !== 'postgres') throw new Error('expected a postgres store');
    const other = await store.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`INSERT INTO epoch (tag, epoch) VALUES ('raced', 'the-other-replicas')`);
      const reading = new QueueEpochs(store).read('raced');
      // Committed only once the read is waiting on the other's row lock.
      await expect
        .poll(
          async () =>
            (
              await store.pool.query<{ waiting: number }>(
                `SELECT count(*)::int AS waiting FROM pg_stat_activity
                  WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO epoch%' AND application_name = $1`,
                [store.applicationName],
              )
            ).rows[0]?.waiting,
          { timeout: 5_000, interval: 20 },
        )
        .toBe(1);
      await other.query('COMMIT');
      expect(await reading).toMatchObject({ epoch: 'the-other-replicas', changed: true, lost: false });
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      other.release();
    }
  });
});
