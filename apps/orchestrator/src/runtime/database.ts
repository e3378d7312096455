import { Kysely, PostgresDialect, type PostgresPool, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import pg from 'pg';
import type { Logger } from './logger.ts';
import { MIGRATIONS } from './migrations/index.ts';

/**
 * One pool per process, pinned to the deployment's schema with search_path, so every query is
 * unqualified and a test run's fresh schema isolates it completely.
 *
 * A connection PostgreSQL drops (restart, failover, pg_terminate_backend) emits 'error' on its client
 * and, when idle, on the pool: unhandled, either ends the process. Both are logged instead; the pool
 * discards the broken client and the next checkout opens a fresh connection, so service resumes by
 * itself once PostgreSQL is back. The query that was running fails and its caller decides (a 503, a
 * retried run).
 */
export function createPool(
  databaseUrl: string,
  schema: string,
  log?: Logger,
  max = 10,
  /** A query not answered by then fails and its connection is dropped (pg's query_timeout). */
  limits: { queryTimeoutMs?: number } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    options: `-c search_path=${schema}`,
    // Names the connections in pg_stat_activity (operators, and tests that cut them).
    application_name: `switchyard-orchestrator/${schema}`.slice(0, 63),
    max,
    connectionTimeoutMillis: 10_000,
    ...(limits.queryTimeoutMs === undefined ? {} : { query_timeout: limits.queryTimeoutMs }),
  });
  pool.on('error', (error) =>
    log?.warn({ err: error }, 'idle PostgreSQL connection lost; it will be replaced'),
  );
  // A checked-out client has no listener of the pool's: one dropped mid-query must not crash either.
  pool.on('connect', (client) => {
    client.on('error', (error) => log?.warn({ err: error }, 'PostgreSQL connection lost'));
  });
  return pool;
}

/** Serializes migrations across replicas starting at once. */
const MIGRATION_LOCK = 7_310_042;

/** Runs `work` while holding the cluster-wide migration lock, so replicas starting at once take turns. */
export async function withMigrationLock<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return await work(client);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

/** The version table, in the deployment's schema: one row per applied migration. */
export const MIGRATION_TABLE = 'schema_migrations';

/**
 * Brings the deployment's schema to the latest version. The cluster-wide lock is held around the whole
 * run (Kysely's own lock covers only applying migrations, not creating its version table), so replicas
 * starting at once, and the checkpointer's setup, take turns. The lock pins one connection and the
 * migrator borrows another, so the pool needs at least two. `migrations` is replaced only by tests.
 */
export async function migrate(
  pool: pg.Pool,
  schema: string,
  migrations: Readonly<Record<string, Migration>> = MIGRATIONS,
): Promise<void> {
  await withMigrationLock(pool, async () => {
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: borrowed(pool) }) });
    try {
      const { error, results = [] } = await new Migrator({
        db,
        provider: { getMigrations: async () => inSchema(schema, migrations) },
        migrationTableSchema: schema,
        migrationTableName: MIGRATION_TABLE,
        migrationLockTableName: `${MIGRATION_TABLE}_lock`,
      }).migrateToLatest();
      if (error !== undefined) {
        const failed = results.find((result) => result.status === 'Error')?.migrationName;
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`migrating schema ${schema} failed${failed ? ` at ${failed}` : ''}: ${reason}`, {
          cause: error,
        });
      }
    } finally {
      await db.destroy();
    }
  });
}

/**
 * Each migration runs in the migrator's transaction; pinning search_path there makes its unqualified
 * names land in `schema` whatever the pool's own setting.
 */
function inSchema(schema: string, migrations: Readonly<Record<string, Migration>>) {
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]): [string, Migration] => [
      name,
      {
        up: async (db) => {
          await sql`SET LOCAL search_path TO ${sql.id(schema)}`.execute(db);
          await migration.up(db);
        },
      },
    ]),
  );
}

/** The pool belongs to the runtime: Kysely may borrow connections but must not end it. */
function borrowed(pool: pg.Pool): PostgresPool {
  return { connect: () => pool.connect(), end: async () => undefined, options: pool.options };
}
