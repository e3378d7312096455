/**
 * The CatalogStore's statements on PostgreSQL (tables `catalog` and `worker_heartbeat` of the queue
 * schema, queue-tables.ts). Each is one round trip; a NOTIFY rides the statement that writes, so a
 * change is never stored without its wake-up, and is delivered at commit.
 */

/** $1 server, $2 entry, $3 channel, $4 payload (the writing worker). A session's own list replaces any. */
export const PUBLISH_TOOLS_SQL = `
  WITH written AS (
    INSERT INTO catalog (server, entry) VALUES ($1, $2::jsonb)
    ON CONFLICT (server) DO UPDATE SET entry = EXCLUDED.entry
    RETURNING server
  )
  SELECT pg_notify($3, $4) FROM written`;

/** $1 servers: those without a row. */
export const MISSING_TOOLS_SQL = `
  SELECT server FROM unnest($1::text[]) AS wanted(server)
  EXCEPT
  SELECT server FROM catalog`;

/**
 * $1 entries (a JSON array), $2 channel, $3 payload. Only absent rows are written: a present list may be
 * another worker's newer one. Identical notifications of one transaction are folded into one.
 */
export const RESTORE_TOOLS_SQL = `
  WITH written AS (
    INSERT INTO catalog (server, entry)
    SELECT item ->> 'server', item FROM jsonb_array_elements($1::jsonb) AS item
    ON CONFLICT (server) DO NOTHING
    RETURNING server
  )
  SELECT server, pg_notify($2, $3) FROM written`;

/**
 * $1 worker id, $2 record, $3 expires at (ms, the record's expiresAt), $4 channel, $5 now (ms).
 * Notifies only when the record changed beyond its dates, or the worker is new or comes back after its
 * heartbeat lapsed: every NOTIFY takes the database-wide commit-order lock (docs/postgres-backend.md
 * §5), and a beat that says nothing new need not wake anyone. The CTEs share one snapshot, so
 * `previous` is the row as it was before this statement.
 */
export const HEARTBEAT_SQL = `
  WITH previous AS (
    SELECT record, expires_at_ms FROM worker_heartbeat WHERE worker_id = $1
  ), written AS (
    INSERT INTO worker_heartbeat (worker_id, record, expires_at_ms) VALUES ($1, $2::jsonb, $3)
    ON CONFLICT (worker_id) DO UPDATE
      SET record = EXCLUDED.record, expires_at_ms = EXCLUDED.expires_at_ms
    RETURNING worker_id
  )
  SELECT pg_notify($4, worker_id) FROM written
  WHERE NOT EXISTS (
    SELECT 1 FROM previous
    WHERE previous.expires_at_ms >= $5
      AND previous.record - 'beatAt' - 'expiresAt' = $2::jsonb - 'beatAt' - 'expiresAt'
  )`;

/** $1 worker id, $2 channel. Announced whether or not the row was there, as on Redis. */
export const REMOVE_WORKER_SQL = `
  WITH removed AS (DELETE FROM worker_heartbeat WHERE worker_id = $1)
  SELECT pg_notify($2, $1)`;

/**
 * $1 forget before (ms). Both tables in one round trip; heartbeats that expired before $1 are deleted
 * and, since the DELETE's effect is not visible to the SELECT, also filtered out by the predicate.
 */
export const READ_CATALOG_SQL = `
  WITH forgotten AS (DELETE FROM worker_heartbeat WHERE expires_at_ms < $1)
  SELECT 'server' AS kind, entry AS body FROM catalog
  UNION ALL
  SELECT 'worker', record FROM worker_heartbeat WHERE expires_at_ms >= $1`;
