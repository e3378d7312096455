import { type Kysely, sql } from 'kysely';

/** Jobs of kind `mcp`: one tools/call through the /mcp gateway (docs/architecture.md, gateway). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check`.execute(db);
  await sql`ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('agent', 'batch', 'mcp'))`.execute(
    db,
  );
}
