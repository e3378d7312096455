import { type PostgresStore, parseConfig } from '@switchyard/contracts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenedStore, postgresBackend } from '../../../libs/contracts/test/contract-backends.ts';
import type { JobDeletion } from '../src/jobs/job-deletion.ts';
import { JOB_RETENTION_QUEUE, JobRetention } from '../src/jobs/job-retention.ts';
import type { JobStore } from '../src/jobs/job-store.ts';

const MINUTE = 60_000;

/**
 * One expired and one live row of each queue-side table whose rows expire, written straight into the
 * table (`now` is the database's clock, ms). Each row's key says which it is.
 */
function rowsOf(now: number): Array<{ table: string; insert: string; expired: unknown[]; live: unknown[] }> {
  return [
    {
      table: 'team_line',
      insert: `INSERT INTO team_line (server, team, call_id, deadline_ms) VALUES ('s', 't', $1, $2)`,
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      table: 'call_quota',
      insert: 'INSERT INTO call_quota (team, tat_ms, expires_at_ms) VALUES ($1, 0, $2)',
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      table: 'oauth_token',
      insert: `INSERT INTO oauth_token (key, value, expires_at_ms) VALUES ($1, '{}', $2)`,
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      table: 'renew_lock',
      insert: `INSERT INTO renew_lock (key, owner, expires_at_ms) VALUES ($1, 'w', $2)`,
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      table: 'mcp_request',
      insert: `INSERT INTO mcp_request (team, request_id, job_id, expires_at_ms) VALUES ('t', $1, 'j', $2)`,
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      table: 'mcp_log_level',
      insert: `INSERT INTO mcp_log_level (team, client, level, expires_at_ms) VALUES ('t', $1, 'info', $2)`,
      expired: ['expired', now - 1_000],
      live: ['live', now + MINUTE],
    },
    {
      // A dead worker's heartbeat stays for the catalog's one-minute horizon: a lapsed one is kept.
      table: 'worker_heartbeat',
      insert: `INSERT INTO worker_heartbeat (worker_id, record, expires_at_ms) VALUES ($1, '{}', $2)`,
      expired: ['expired', now - 2 * MINUTE],
      live: ['live', now - 2_000],
    },
    {
      // Older than the window (adaptiveTimeouts.windowMs, 15 min by default) counts nowhere any more.
      table: 'latency_sample',
      insert: `INSERT INTO latency_sample (server, tool, finished_at_ms, ms) VALUES ('s', $1, $2, 5)`,
      expired: ['expired', now - 16 * MINUTE],
      live: ['live', now - 14 * MINUTE],
    },
  ];
}

/** The key column each table's rows were told apart by. */
const KEY_OF: Record<string, string> = {
  team_line: 'call_id',
  call_quota: 'team',
  oauth_token: 'key',
  renew_lock: 'key',
  mcp_request: 'request_id',
  mcp_log_level: 'client',
  worker_heartbeat: 'worker_id',
  latency_sample: 'tool',
};

async function keysLeft(store: PostgresStore): Promise<Record<string, string[]>> {
  const left: Record<string, string[]> = {};
  for (const [table, key] of Object.entries(KEY_OF)) {
    const { rows } = await store.pool.query<{ key: string }>(`SELECT ${key} AS key FROM ${table} ORDER BY 1`);
    left[table] = rows.map((row) => row.key);
  }
  return left;
}

async function writeRows(store: PostgresStore): Promise<void> {
  const { rows } = await store.pool.query<{ now: string }>(
    'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now',
  );
  for (const row of rowsOf(Number(rows[0]?.now))) {
    await store.pool.query(row.insert, row.expired);
    await store.pool.query(row.insert, row.live);
  }
}

const everyTableKeepsOnlyTheLiveRow = Object.fromEntries(
  Object.keys(KEY_OF).map((table) => [table, ['live']]),
);

/** docs/postgres-backend.md §2: expired rows are deleted by one sweep statement per table, every minute. */
describe('the retention sweep of expired queue-side rows on postgres', () => {
  let opened: OpenedStore | undefined;
  let store: PostgresStore;
  let retention: JobRetention | undefined;

  beforeAll(async () => {
    opened = await postgresBackend.open();
    if (opened.store.kind !== 'postgres') throw new Error('expected a postgres store');
    store = opened.store;
  });
  afterAll(async () => {
    await retention?.onModuleDestroy().catch(() => undefined);
    await opened?.close();
  });

  function jobRetention(): JobRetention {
    const config = parseConfig({ servers: {}, orchestrator: { retentionSweepMs: 3_600_000 } });
    const jobs = { endedBefore: async () => [] } as unknown as JobStore;
    return new JobRetention(jobs, {} as JobDeletion, store, config, pino({ level: 'silent' }));
  }

  it('deletes the expired row of each table in one sweep and keeps the live one', async () => {
    await writeRows(store);
    const before = await keysLeft(store);
    expect(Object.values(before).every((keys) => keys.length === 2)).toBe(true);

    const deleted = await jobRetention().sweepExpiredRows();
    expect(deleted).toEqual(Object.fromEntries(Object.keys(KEY_OF).map((table) => [table, 1])));
    expect(await keysLeft(store)).toEqual(everyTableKeepsOnlyTheLiveRow);
  });

  it('is scheduled every minute on {job-retention}, and the scheduled sweep deletes them', async () => {
    for (const table of Object.keys(KEY_OF)) await store.pool.query(`TRUNCATE ${table}`);
    await writeRows(store);
    retention = jobRetention();
    await retention.onApplicationBootstrap();
    // The scheduler's first sweep is added at once, the next ones a minute apart.
    await expect
      .poll(() => keysLeft(store), { timeout: 15_000, interval: 100 })
      .toEqual(everyTableKeepsOnlyTheLiveRow);
    const { rows } = await store.pool.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM job WHERE queue = $1',
      [JOB_RETENTION_QUEUE],
    );
    expect(rows[0]?.count).toBeGreaterThan(0);
  });
});
