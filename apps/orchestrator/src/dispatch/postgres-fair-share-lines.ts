import { POSTGRES_NOW_MS } from '@switchyard/contracts';
import type pg from 'pg';
import type { FairShareLines } from './fair-share-lines.ts';

/**
 * Joins the line and counts it in one statement. The count reads the statement's snapshot, which cannot
 * see the CTE's own row: hence `1 +` and the exclusion of the call itself. Rows past their deadline are
 * never counted, and this line's are deleted on the way (not the call's own row: one statement must not
 * touch a row twice). $1 server, $2 team, $3 call id, $4 deadline (epoch ms).
 */
export const ENTER_LINE_SQL = `
WITH expired AS (
  DELETE FROM team_line
   WHERE server = $1 AND team = $2 AND call_id <> $3 AND deadline_ms <= ${POSTGRES_NOW_MS}
),
joined AS (
  INSERT INTO team_line (server, team, call_id, deadline_ms)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (server, team, call_id) DO UPDATE SET deadline_ms = EXCLUDED.deadline_ms
)
SELECT 1 + count(*)::int AS place
  FROM team_line
 WHERE server = $1 AND team = $2 AND call_id <> $3 AND deadline_ms > ${POSTGRES_NOW_MS}`;

export const LEAVE_LINE_SQL = `DELETE FROM team_line WHERE server = $1 AND team = $2 AND call_id = $3`;

/** A line is rows of team_line, one per call, until its start deadline. */
export class PostgresFairShareLines implements FairShareLines {
  constructor(private readonly pool: pg.Pool) {}

  async enter(server: string, team: string, callId: string, deadline: number): Promise<number> {
    const { rows } = await this.pool.query<{ place: number }>(ENTER_LINE_SQL, [
      server,
      team,
      callId,
      Math.round(deadline),
    ]);
    return rows[0]?.place ?? 1;
  }

  async leave(server: string, team: string, callId: string): Promise<void> {
    await this.pool.query(LEAVE_LINE_SQL, [server, team, callId]);
  }
}
