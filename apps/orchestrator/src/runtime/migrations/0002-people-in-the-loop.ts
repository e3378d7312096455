import { type Kysely, sql } from 'kysely';

/**
 * People in the loop (docs/semantics.md §14–15): a job may wait for a person (`input_required`), and
 * every question or approval a call waits for is a row, answered or decided once, with who and when.
 */
const STATEMENTS = [
  `ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check`,
  `ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
     CHECK (status IN ('queued', 'running', 'input_required', 'succeeded', 'failed', 'cancelled'))`,
  `CREATE TABLE tool_call_inputs (
     job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
     tool_call_id text NOT NULL,
     kind text NOT NULL CHECK (kind IN ('approval', 'question')),
     round integer NOT NULL,
     server text NOT NULL,
     tool text NOT NULL,
     request jsonb NOT NULL,
     expires_at timestamptz NOT NULL,
     state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'answered', 'expired')),
     answer jsonb,
     decided_by text,
     decided_at timestamptz,
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (job_id, tool_call_id, kind, round)
   )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
