import { POSTGRES_NOW_MS } from '@switchyard/contracts';
import type pg from 'pg';
import { AMBIGUOUS, ENTRY_TTL_SECONDS, requestIdKey } from './request-entry.ts';
import type { RequestRegistry } from './request-registry.ts';

/**
 * Register in one statement ($1 team, $2 request id, $3 job id, $4 ambiguous marker, $5 lifetime ms): a
 * new or expired entry becomes this job's; a live one naming another job (or already ambiguous)
 * becomes ambiguous with a fresh lifetime; a live one naming this job is left as it is.
 */
export const REGISTER_SQL = `
  INSERT INTO mcp_request (team, request_id, job_id, expires_at_ms)
  VALUES ($1, $2, $3, ${POSTGRES_NOW_MS} + $5)
  ON CONFLICT (team, request_id) DO UPDATE
    SET job_id = CASE WHEN mcp_request.expires_at_ms <= ${POSTGRES_NOW_MS} THEN EXCLUDED.job_id ELSE $4 END,
        expires_at_ms = EXCLUDED.expires_at_ms
    WHERE mcp_request.expires_at_ms <= ${POSTGRES_NOW_MS} OR mcp_request.job_id <> EXCLUDED.job_id`;

/** Release: only the entry that still names this job (an ambiguous one lives out its lifetime). */
export const RELEASE_SQL = `DELETE FROM mcp_request WHERE team = $1 AND request_id = $2 AND job_id = $3`;

/** Lookup: an expired entry is never read as present, whether or not the sweep has run. */
export const LOOKUP_SQL = `
  SELECT job_id FROM mcp_request WHERE team = $1 AND request_id = $2 AND expires_at_ms > ${POSTGRES_NOW_MS}`;

/** The registry as rows of the queue schema's `mcp_request` table (docs/postgres-backend.md §2). */
export class PostgresRequestRegistry implements RequestRegistry {
  constructor(private readonly pool: pg.Pool) {}

  async register(team: string, requestId: string | number, jobId: string): Promise<void> {
    await this.pool.query(REGISTER_SQL, [
      team,
      requestIdKey(requestId),
      jobId,
      AMBIGUOUS,
      ENTRY_TTL_SECONDS * 1000,
    ]);
  }

  async release(team: string, requestId: string | number, jobId: string): Promise<void> {
    await this.pool.query(RELEASE_SQL, [team, requestIdKey(requestId), jobId]);
  }

  async jobOf(team: string, requestId: string | number): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ job_id: string }>(LOOKUP_SQL, [team, requestIdKey(requestId)]);
    const jobId = rows[0]?.job_id;
    return jobId && jobId !== AMBIGUOUS ? jobId : undefined;
  }
}
