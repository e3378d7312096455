/**
 * Switchyard's queue-side tables on the postgres backend (docs/postgres-backend.md §2): the state that
 * Redis keeps next to BullMQ's keys, here next to BullMQ's tables in the queue schema, so that it is lost
 * together with the queues and never separately. Each statement is idempotent: every process runs them at
 * start-up after BullMQ's own migrations, under BullMQ's migration lock. Unqualified names: the pool's
 * search_path is the queue schema.
 */
export const QUEUE_SIDE_TABLES: Readonly<Record<string, string>> = {
  /** OutcomeNotices: settled calls, read by every orchestrator from its cursor (woken by NOTIFY). */
  outcomeNotice: `
    CREATE TABLE IF NOT EXISTS outcome_notice (
      id bigserial PRIMARY KEY,
      body jsonb NOT NULL,
      created_at_ms bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
    )`,
  /** CatalogStore: one tool list per server. */
  catalog: `
    CREATE TABLE IF NOT EXISTS catalog (
      server text PRIMARY KEY,
      entry jsonb NOT NULL
    )`,
  /** CatalogStore: one heartbeat per live worker; past expires_at_ms it is a dead worker's. */
  workerHeartbeat: `
    CREATE TABLE IF NOT EXISTS worker_heartbeat (
      worker_id text PRIMARY KEY,
      record jsonb NOT NULL,
      expires_at_ms bigint NOT NULL
    )`,
  /** FairShareLines: a team's calls not yet settled on one server, until their start deadline. */
  teamLine: `
    CREATE TABLE IF NOT EXISTS team_line (
      server text NOT NULL,
      team text NOT NULL,
      call_id text NOT NULL,
      deadline_ms bigint NOT NULL,
      PRIMARY KEY (server, team, call_id)
    )`,
  /** LatencySamples: recent successful call durations per server and tool. */
  latencySample: `
    CREATE TABLE IF NOT EXISTS latency_sample (
      server text NOT NULL,
      tool text NOT NULL,
      finished_at_ms bigint NOT NULL,
      ms double precision NOT NULL
    )`,
  latencySampleIndex: `
    CREATE INDEX IF NOT EXISTS latency_sample_recent ON latency_sample (server, tool, finished_at_ms DESC)`,
  /** The server's window (all its tools) is read newest first as well. */
  latencySampleServerIndex: `
    CREATE INDEX IF NOT EXISTS latency_sample_server_recent ON latency_sample (server, finished_at_ms DESC)`,
  /** CallQuota: each team's GCRA theoretical arrival time. */
  callQuota: `
    CREATE TABLE IF NOT EXISTS call_quota (
      team text PRIMARY KEY,
      tat_ms double precision NOT NULL,
      expires_at_ms bigint NOT NULL
    )`,
  /** TokenCache: a team's OAuth token per (team, issuer, server), and the fleet-wide renewal lease. */
  oauthToken: `
    CREATE TABLE IF NOT EXISTS oauth_token (
      key text PRIMARY KEY,
      value text NOT NULL,
      expires_at_ms bigint NOT NULL
    )`,
  renewLock: `
    CREATE TABLE IF NOT EXISTS renew_lock (
      key text PRIMARY KEY,
      owner text NOT NULL,
      expires_at_ms bigint NOT NULL
    )`,
  /** RequestRegistry: a /mcp request id → its job, per team. */
  mcpRequest: `
    CREATE TABLE IF NOT EXISTS mcp_request (
      team text NOT NULL,
      request_id text NOT NULL,
      job_id text NOT NULL,
      expires_at_ms bigint NOT NULL,
      PRIMARY KEY (team, request_id)
    )`,
  /** LogLevels: the level a 2025-11-25 /mcp client set with logging/setLevel, per team and API key. */
  mcpLogLevel: `
    CREATE TABLE IF NOT EXISTS mcp_log_level (
      team text NOT NULL,
      client text NOT NULL,
      level text NOT NULL,
      expires_at_ms bigint NOT NULL,
      PRIMARY KEY (team, client)
    )`,
  /** QueueEpochs: vouches that the queue schema still holds what was written since it was set. */
  epoch: `
    CREATE TABLE IF NOT EXISTS epoch (
      tag text PRIMARY KEY,
      epoch text NOT NULL
    )`,
};
