import type { PostgresStore } from '../store.ts';
import { POSTGRES_NOW_MS } from './database-clock.ts';

/** How long rows whose expiry is not written in them stay after it (both from the deployment's config). */
export interface ExpiredRowsHorizons {
  /**
   * A dead worker's heartbeat stays this long past its expires_at_ms: the catalog reader counts it as
   * recovering until then, and forgets it after.
   */
  heartbeatMs: number;
  /** A latency sample older than this counts in no window: the longest adaptiveTimeouts.windowMs. */
  latencyWindowMs: number;
}

interface ExpiredRowsSweep {
  sql: string;
  params: (horizons: ExpiredRowsHorizons) => unknown[];
}

/**
 * The one sweep statement per queue-side table whose rows expire (docs/postgres-backend.md §2). Reads
 * never depend on them (each concern's reads skip an expired row by its predicate): they only keep the
 * tables small, deleting rows no read will ever see again, such as the lines of teams that stopped calling
 * or the leases of renewers that died. outcome_notice is trimmed by its readers (outcome-notices-postgres.ts).
 */
export const EXPIRED_ROWS_SWEEPS = {
  team_line: { sql: `DELETE FROM team_line WHERE deadline_ms <= ${POSTGRES_NOW_MS}`, params: () => [] },
  call_quota: { sql: `DELETE FROM call_quota WHERE expires_at_ms <= ${POSTGRES_NOW_MS}`, params: () => [] },
  oauth_token: { sql: `DELETE FROM oauth_token WHERE expires_at_ms <= ${POSTGRES_NOW_MS}`, params: () => [] },
  renew_lock: { sql: `DELETE FROM renew_lock WHERE expires_at_ms <= ${POSTGRES_NOW_MS}`, params: () => [] },
  mcp_request: { sql: `DELETE FROM mcp_request WHERE expires_at_ms <= ${POSTGRES_NOW_MS}`, params: () => [] },
  mcp_log_level: {
    sql: `DELETE FROM mcp_log_level WHERE expires_at_ms <= ${POSTGRES_NOW_MS}`,
    params: () => [],
  },
  /** Past the horizon, as the catalog's read forgets them ($1 the horizon, ms). */
  worker_heartbeat: {
    sql: `DELETE FROM worker_heartbeat WHERE expires_at_ms < ${POSTGRES_NOW_MS} - $1::bigint`,
    params: ({ heartbeatMs }) => [heartbeatMs],
  },
  /** Older than every window, as a record's trim deletes them for its own server ($1 the window, ms). */
  latency_sample: {
    sql: `DELETE FROM latency_sample WHERE finished_at_ms < ${POSTGRES_NOW_MS} - $1::bigint`,
    params: ({ latencyWindowMs }) => [latencyWindowMs],
  },
} as const satisfies Record<string, ExpiredRowsSweep>;

export type ExpiringTable = keyof typeof EXPIRED_ROWS_SWEEPS;

/**
 * Runs every table's sweep, each its own statement (and transaction, so no lock is held across tables);
 * returns how many rows each deleted. A failing table is named in the error; the tables before it stay
 * swept, the ones after wait for the next sweep.
 */
export async function sweepExpiredRows(
  store: PostgresStore,
  horizons: ExpiredRowsHorizons,
): Promise<Record<ExpiringTable, number>> {
  const deleted = {} as Record<ExpiringTable, number>;
  for (const [table, sweep] of Object.entries(EXPIRED_ROWS_SWEEPS) as Array<
    [ExpiringTable, ExpiredRowsSweep]
  >) {
    try {
      deleted[table] = (await store.pool.query(sweep.sql, sweep.params(horizons))).rowCount ?? 0;
    } catch (error) {
      throw new Error(`sweeping the expired rows of ${table} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  return deleted;
}
