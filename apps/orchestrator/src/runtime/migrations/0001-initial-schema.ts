import { type Kysely, sql } from 'kysely';

/**
 * The schema as it was before versioning, statement for statement. IF NOT EXISTS stays so that a
 * deployment created by the unversioned start-up code adopts this version without error.
 * A released migration never changes: a new schema change is a new file.
 */
const STATEMENTS = [
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

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
