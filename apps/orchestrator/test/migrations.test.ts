import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createPool, MIGRATION_TABLE, migrate } from '../src/runtime/database.ts';
import { MIGRATIONS } from '../src/runtime/migrations/index.ts';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const UNVERSIONED_SCHEMA = new URL('./fixtures/unversioned-schema.sql', import.meta.url);
const VERSIONS = Object.keys(MIGRATIONS).sort();

/** Real PostgreSQL, a fresh schema per test; every pool and schema a test makes is dropped after it. */
const pools: pg.Pool[] = [];
const schemas: string[] = [];

function freshSchema(): string {
  const schema = `sy_test_mig_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  schemas.push(schema);
  return schema;
}

/** A pool as a replica has it: pinned to the deployment's schema. */
function replicaPool(schema: string): pg.Pool {
  const pool = createPool(DATABASE_URL, schema);
  pools.push(pool);
  return pool;
}

/** What the orchestrator did at start before migrations had versions: create the schema, run the list. */
async function createUnversioned(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(await readFile(UNVERSIONED_SCHEMA, 'utf8'));
}

async function appliedVersions(pool: pg.Pool, schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT name FROM ${schema}.${MIGRATION_TABLE} ORDER BY name`,
  );
  return rows.map((row) => row.name);
}

async function seedRows(pool: pg.Pool): Promise<void> {
  await pool.query(
    `INSERT INTO jobs (id, team, kind, status, request, result, trace_id, traceparent, idempotency_key, finished_at)
     VALUES ('job-1', 'alpha', 'agent', 'succeeded', '{"prompt":"hi"}', '{"answer":42}', 't1',
             '00-t1-s1-01', 'key-1', now()),
            ('job-2', 'beta', 'batch', 'running', '{"calls":[]}', NULL, 't2', '00-t2-s2-01', NULL, NULL)`,
  );
  await pool.query(
    `INSERT INTO tool_calls (job_id, tool_call_id, position, model_tool, server, tool, arguments, status, outcome)
     VALUES ('job-1', 'call-1', 0, 'notes__append', 'notes', 'append', '{"text":"a"}', 'ok',
             '{"status":"ok","executed":"yes"}'),
            ('job-2', 'call-2', 0, 'search__find', 'search', 'find', '{"q":"b"}', 'dispatched', NULL)`,
  );
  await pool.query(
    `INSERT INTO job_events (job_id, type, data)
     VALUES ('job-1', 'started', '{}'), ('job-1', 'finished', '{"ok":true}'), ('job-2', 'started', '{}')`,
  );
}

/** Every row of the three tables, as JSON, in a stable order. */
async function snapshotRows(pool: pg.Pool): Promise<Record<string, unknown[]>> {
  const rows = async (table: string, order: string) =>
    (await pool.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY ${order}`)).rows.map((r) => r.row);
  return {
    jobs: await rows('jobs', 'id'),
    tool_calls: await rows('tool_calls', 'job_id, tool_call_id'),
    job_events: await rows('job_events', 'id'),
  };
}

/** Columns, constraints and indexes of a schema's own tables, with the schema's name taken out. */
async function describeSchema(pool: pg.Pool, schema: string): Promise<unknown> {
  const params = [schema, [MIGRATION_TABLE, `${MIGRATION_TABLE}_lock`]];
  const columns = await pool.query(
    `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
       FROM information_schema.columns
      WHERE table_schema = $1 AND table_name <> ALL ($2)
      ORDER BY table_name, ordinal_position`,
    params,
  );
  const constraints = await pool.query(
    `SELECT c.relname AS table_name, k.conname, k.contype, pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname <> ALL ($2)
      ORDER BY c.relname, k.conname`,
    params,
  );
  const indexes = await pool.query(
    `SELECT tablename, indexname, indexdef FROM pg_indexes
      WHERE schemaname = $1 AND tablename <> ALL ($2) ORDER BY tablename, indexname`,
    params,
  );
  const anonymous = JSON.stringify({
    columns: columns.rows,
    constraints: constraints.rows,
    indexes: indexes.rows,
  }).replaceAll(`${schema}.`, '');
  return JSON.parse(anonymous);
}

/** The one change the versions after 0001 make to the unversioned shape: 0003 allows jobs of kind `mcp`. */
function withLaterVersions(shape: unknown): unknown {
  return JSON.parse(
    JSON.stringify(shape).replace(
      "CHECK ((kind = ANY (ARRAY['agent'::text, 'batch'::text])))",
      "CHECK ((kind = ANY (ARRAY['agent'::text, 'batch'::text, 'mcp'::text])))",
    ),
  );
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  try {
    for (const schema of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
});

describe('versioned migrations', () => {
  it('migrates a database of the unversioned schema, keeping its rows, and records the latest version', async () => {
    const schema = freshSchema();
    const pool = replicaPool(schema);
    await createUnversioned(pool, schema);
    await seedRows(pool);
    const before = await snapshotRows(pool);
    const shapeBefore = await describeSchema(pool, schema);
    // Later versions change the schema: the migrated one must be what a fresh deployment gets.
    const fresh = freshSchema();
    await migrate(replicaPool(fresh), fresh);

    await migrate(pool, schema);

    // Every row kept as it was; later versions only add columns (empty for old rows).
    const after = await snapshotRows(pool);
    const jobsAfter = (after.jobs ?? []) as Record<string, unknown>[];
    expect(jobsAfter.map(({ request_digest, ...row }) => row)).toEqual(before.jobs);
    expect(jobsAfter.map((row) => row.request_digest)).toEqual([null, null]);
    const callsAfter = (after.tool_calls ?? []) as Record<string, unknown>[];
    expect(callsAfter.map(({ redis_epoch, ...row }) => row)).toEqual(before.tool_calls);
    expect(callsAfter.map((row) => row.redis_epoch)).toEqual(callsAfter.map(() => null));
    expect({ ...after, jobs: [], tool_calls: [] }).toEqual({ ...before, jobs: [], tool_calls: [] });
    expect(before.jobs).toHaveLength(2);
    expect(before.job_events).toHaveLength(3);
    // Adopted as 0001, then migrated forward: the shape of the first version plus what later ones add.
    const adopted = freshSchema();
    const firstOnly = replicaPool(adopted);
    await migrate(firstOnly, adopted, {
      '0001_initial_schema': MIGRATIONS['0001_initial_schema'] as Migration,
    });
    expect(await describeSchema(firstOnly, adopted)).toEqual(shapeBefore);
    expect(await describeSchema(pool, schema)).toEqual(await describeSchema(pool, fresh));
    expect(await appliedVersions(pool, schema)).toEqual(VERSIONS);
    // The serial survived too: the next event follows the old ones.
    const { rows } = await pool.query(
      `INSERT INTO job_events (job_id, type, data) VALUES ('job-2', 'finished', '{}') RETURNING id`,
    );
    expect(Number(rows[0].id)).toBe(4);
  });

  it('builds a fresh schema identical to the unversioned one brought up to date, and a restart changes nothing', async () => {
    const fresh = freshSchema();
    const legacy = freshSchema();
    const pool = replicaPool(fresh);
    const legacyPool = replicaPool(legacy);
    await createUnversioned(legacyPool, legacy);
    await migrate(legacyPool, legacy);

    await migrate(pool, fresh);
    const firstRun = await pool.query(`SELECT name, timestamp FROM ${MIGRATION_TABLE} ORDER BY name`);
    await migrate(pool, fresh);

    expect(await describeSchema(pool, fresh)).toEqual(withLaterVersions(await describeSchema(pool, legacy)));
    expect(await appliedVersions(pool, fresh)).toEqual(VERSIONS);
    expect((await pool.query(`SELECT name, timestamp FROM ${MIGRATION_TABLE} ORDER BY name`)).rows).toEqual(
      firstRun.rows,
    );
  });

  it('lets replicas starting at once all succeed and applies each version once', async () => {
    const schema = freshSchema();
    const replicas = Array.from({ length: 4 }, () => replicaPool(schema));

    const results = await Promise.allSettled(replicas.map((pool) => migrate(pool, schema)));

    expect(results.map((result) => result.status)).toEqual(Array(4).fill('fulfilled'));
    expect(await appliedVersions(replicas[0] as pg.Pool, schema)).toEqual(VERSIONS);
    await seedRows(replicas[1] as pg.Pool);
  });

  it('puts the tables in the schema it is given, whatever the pool search_path', async () => {
    const schema = freshSchema();
    // Another fresh schema, so that a wrongly placed table is dropped with it, not left in public.
    const elsewhere = freshSchema();
    const pool = replicaPool(elsewhere);
    await pool.query(`CREATE SCHEMA ${elsewhere}`);

    await migrate(pool, schema);

    const tablesIn = async (name: string) =>
      (
        await pool.query(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [name],
        )
      ).rows.map((row) => row.table_name);
    expect(await tablesIn(schema)).toEqual([
      'job_events',
      'jobs',
      MIGRATION_TABLE,
      `${MIGRATION_TABLE}_lock`,
      'tool_call_inputs',
      'tool_calls',
    ]);
    expect(await tablesIn(elsewhere)).toEqual([]);
  });

  it('applies a later version on top of a live schema and keeps the data', async () => {
    const schema = freshSchema();
    const pool = replicaPool(schema);
    await migrate(pool, schema);
    await seedRows(pool);
    const addPriority: Migration = {
      up: async (db: Kysely<unknown>) => {
        await sql`ALTER TABLE jobs ADD COLUMN priority integer NOT NULL DEFAULT 5`.execute(db);
      },
    };

    await migrate(pool, schema, { ...MIGRATIONS, '9999_test_add_priority': addPriority });

    const { rows } = await pool.query('SELECT id, priority FROM jobs ORDER BY id');
    expect(rows).toEqual([
      { id: 'job-1', priority: 5 },
      { id: 'job-2', priority: 5 },
    ]);
    expect(await appliedVersions(pool, schema)).toEqual([...VERSIONS, '9999_test_add_priority']);
  });

  it('rolls a failing version back whole and names the schema and the version', async () => {
    const schema = freshSchema();
    const pool = replicaPool(schema);
    await migrate(pool, schema);
    const broken: Migration = {
      up: async (db: Kysely<unknown>) => {
        await sql`CREATE TABLE half_done (id integer)`.execute(db);
        await sql`ALTER TABLE jobs ADD COLUMN team text`.execute(db);
      },
    };

    await expect(migrate(pool, schema, { ...MIGRATIONS, '9999_test_broken': broken })).rejects.toThrow(
      `migrating schema ${schema} failed at 9999_test_broken: column "team" of relation "jobs" already exists`,
    );
    expect(await appliedVersions(pool, schema)).toEqual(VERSIONS);
    const { rows } = await pool.query('SELECT to_regclass($1) AS table', [`${schema}.half_done`]);
    expect(rows[0].table).toBeNull();
  });

  it('refuses a schema that a newer release migrated, naming the unknown version', async () => {
    const schema = freshSchema();
    const pool = replicaPool(schema);
    const newer: Migration = { up: async () => undefined };
    await migrate(pool, schema, { ...MIGRATIONS, '9999_test_from_the_future': newer });

    await expect(migrate(pool, schema)).rejects.toThrow(
      `migrating schema ${schema} failed: corrupted migrations: previously executed migration 9999_test_from_the_future is missing`,
    );
  });
});
