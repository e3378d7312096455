import pg from 'pg';
import type { Logger } from './logger.ts';

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
export function createPool(databaseUrl: string, schema: string, log?: Logger, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    options: `-c search_path=${schema}`,
    // Names the connections in pg_stat_activity (operators, and tests that cut them).
    application_name: `switchyard-orchestrator/${schema}`.slice(0, 63),
    max,
    connectionTimeoutMillis: 10_000,
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

const MIGRATIONS: string[] = [
  `CREATE TABLE IF NOT EXISTS jobs (
     id text PRIMARY KEY,
     team text NOT NULL,
     kind text NOT NULL CHECK (kind IN ('agent', 'batch')),
     status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
     request jsonb NOT NULL,
     result jsonb,
     error text,
     trace_id text NOT NULL,
     traceparent text NOT NULL,
     idempotency_key text,
     created_at timestamptz NOT NULL DEFAULT now(),
     started_at timestamptz,
     finished_at timestamptz,
     UNIQUE (team, idempotency_key)
   )`,
  `CREATE INDEX IF NOT EXISTS jobs_team_active ON jobs (team) WHERE status IN ('queued', 'running')`,
  `CREATE TABLE IF NOT EXISTS tool_calls (
     job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
     tool_call_id text NOT NULL,
     position integer NOT NULL,
     model_tool text NOT NULL,
     server text,
     tool text,
     arguments jsonb NOT NULL,
     status text NOT NULL,
     outcome jsonb,
     dispatched_at timestamptz NOT NULL DEFAULT now(),
     finished_at timestamptz,
     PRIMARY KEY (job_id, tool_call_id)
   )`,
  `CREATE TABLE IF NOT EXISTS job_events (
     id bigserial PRIMARY KEY,
     job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
     type text NOT NULL,
     data jsonb NOT NULL,
     at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS job_events_job ON job_events (job_id, id)`,
];

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

export async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  await withMigrationLock(pool, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    for (const statement of MIGRATIONS) await client.query(statement);
  });
}
