import { randomUUID } from 'node:crypto';
import { ERROR, emptyCheckpoint, INTERRUPT, RESUME } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import pg from 'pg';
import * as vitest from 'vitest';
import { BatchedPostgresSaver } from '../src/checkpoints/batched-postgres-saver.ts';

// The suite is written for Jest-style globals; this project's vitest does not enable them.
const { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } = vitest;
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Each checkpointer the suite asks for gets a fresh schema on the real PostgreSQL, dropped with it. */
const owned = new Map<BatchedPostgresSaver, { pool: pg.Pool; schema: string }>();

/**
 * LangGraph's own checkpointer validation suite (put, putWrites, getTuple, list, …) against the saver
 * that batches the library's writes: what it reads back must be what the library's writes would leave.
 */
validate<BatchedPostgresSaver>({
  checkpointerName: 'BatchedPostgresSaver',
  async createCheckpointer() {
    const schema = `sy_test_ckpt_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    const saver = new BatchedPostgresSaver(pool, { schema });
    await saver.setup();
    owned.set(saver, { pool, schema });
    return saver;
  },
  async destroyCheckpointer(saver) {
    const resources = owned.get(saver);
    if (!resources) return;
    owned.delete(saver);
    await resources.pool.query(`DROP SCHEMA IF EXISTS ${resources.schema} CASCADE`);
    await resources.pool.end();
  },
});

/**
 * Beyond the suite: one putWrites call that writes a channel twice. The library's statements run one
 * by one (a special channel such as an error is upserted: the last wins; other channels keep their
 * position as key: each is kept); one batched statement must leave the same rows.
 */
vitest.describe('BatchedPostgresSaver next to the library', () => {
  const savers: Array<{ saver: PostgresSaver; pool: pg.Pool; schema: string }> = [];

  async function fresh<T extends PostgresSaver>(make: (pool: pg.Pool, schema: string) => T): Promise<T> {
    const schema = `sy_test_ckpt_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    const saver = make(pool, schema);
    await saver.setup();
    savers.push({ saver, pool, schema });
    return saver;
  }

  vitest.afterAll(async () => {
    for (const { pool, schema } of savers) {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });

  vitest.it.each([
    [
      'an error written twice',
      [
        [ERROR, 'first'],
        [ERROR, 'second'],
      ],
    ],
    [
      'an interrupt and a resume',
      [
        [INTERRUPT, 'ask'],
        [RESUME, 'answer'],
        [INTERRUPT, 'ask again'],
      ],
    ],
    [
      'ordinary channels, one twice',
      [
        ['messages', 'a'],
        ['steps', 1],
        ['messages', 'b'],
      ],
    ],
  ] as const)('leaves what the library leaves for %s', async (_name, writes) => {
    const library = await fresh((pool, schema) => new PostgresSaver(pool, undefined, { schema }));
    const batched = await fresh((pool, schema) => new BatchedPostgresSaver(pool, { schema }));
    const pendingWrites = async (saver: PostgresSaver) => {
      const config = await saver.put(
        { configurable: { thread_id: 'thread', checkpoint_ns: '' } },
        emptyCheckpoint(),
        { source: 'loop', step: 0, parents: {} },
        {},
      );
      await saver.putWrites(
        config,
        writes.map(([channel, value]) => [channel, value]),
        'task-1',
      );
      return (await saver.getTuple(config))?.pendingWrites;
    };
    const expected = await pendingWrites(library);
    vitest.expect(expected?.length).toBeGreaterThan(0);
    vitest.expect(await pendingWrites(batched)).toEqual(expected);
  });
});
