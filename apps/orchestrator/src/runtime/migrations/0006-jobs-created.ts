import { type Kysely, sql } from 'kysely';

/**
 * Operators list every team's jobs newest first (issue 23): the same keyset on (created_at, id) as a
 * team's list (jobs_team_created), without the team in front.
 */
const STATEMENTS = ['CREATE INDEX jobs_created ON jobs (created_at DESC, id DESC)'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
