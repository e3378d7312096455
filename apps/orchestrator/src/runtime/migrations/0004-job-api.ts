import { type Kysely, sql } from 'kysely';

/**
 * What the complete job API needs (issue 12): the batch status `completed_with_errors`, the digest of
 * the submitted request (an Idempotency-Key reused with another body is a 422), and indexes for listing
 * a team's jobs newest first (keyset on created_at, id), filtering by metadata, and finding jobs whose
 * retention has run out.
 */
const STATEMENTS = [
  'ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check',
  `ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
     CHECK (status IN ('queued', 'running', 'input_required', 'succeeded', 'completed_with_errors', 'failed', 'cancelled'))`,
  'ALTER TABLE jobs ADD COLUMN request_digest text',
  'CREATE INDEX jobs_team_created ON jobs (team, created_at DESC, id DESC)',
  `CREATE INDEX jobs_metadata ON jobs USING gin ((request -> 'metadata') jsonb_path_ops)`,
  'CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
