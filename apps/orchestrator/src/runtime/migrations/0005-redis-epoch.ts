import { type Kysely, sql } from 'kysely';

/**
 * PostgreSQL is the record and Redis is rebuilt from it (issue 20): each dispatched call keeps the
 * Redis epoch of its queue's slot at dispatch (redisKeys.epoch), so a re-dispatch whose queue job is gone
 * can tell "never queued" (same epoch) from "lost with Redis's data, may have run" (another epoch).
 * Null for calls dispatched before this column: their epoch is unknown. The partial index serves the
 * reconciler, which looks for open agent and batch jobs oldest first on every replica.
 */
const STATEMENTS = [
  'ALTER TABLE tool_calls ADD COLUMN redis_epoch text',
  `CREATE INDEX jobs_open_runs ON jobs (created_at, id)
     WHERE status IN ('queued', 'running', 'input_required') AND kind <> 'mcp'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
