import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DATABASE_URL } from '../../support/backend.ts';
import { exampleServer } from '../../support/fleet.ts';
import { CallIds, dispatchOk, progress, withScope } from '../harness.ts';
import { benchFleetOn } from '../postgres-fleet.ts';
import { clockTicksPerSecond, cpuTicks } from '../process-cpu.ts';

/** What the scenario's database did, from PostgreSQL's own counters, at one instant. */
interface PgWork {
  commits: number;
  rollbacks: number;
  inserted: number;
  updated: number;
  deleted: number;
  /** Rows read (tup_returned + tup_fetched). */
  read: number;
  lsn: string;
  /** CPU ticks (user + sys) of each backend process serving the database, by pid. */
  ticks: Map<number, number>;
  at: number;
}

export interface PgCostRow {
  /** Committed transactions (each statement outside BEGIN … COMMIT is one). */
  transactions: number;
  rowsInserted: number;
  rowsUpdated: number;
  rowsDeleted: number;
  rowsRead: number;
  /** WAL bytes of the scenario's own database's records (pg_walinspect); undefined without it. */
  walBytes: number | undefined;
  /** Every WAL byte the whole server wrote in the window (other databases included). */
  walBytesServer: number;
  /** CPU (user + sys) of the backend processes serving the scenario's connections. */
  cpuMs: number;
}

export interface PostgresCostResult {
  calls: number;
  /** How statements were counted: pg_stat_statements is not loaded on the machine, so transactions. */
  counting: string;
  idempotent: PgCostRow;
  nonIdempotent: PgCostRow;
  /** The fleet at rest (one worker, two servers, a dispatcher), per second. */
  idlePerSecond: PgCostRow;
  /** Backend connections by application_name while the fleet runs. */
  connections: Record<string, number>;
  maxConnections: number;
}

export interface PostgresCostOptions {
  warmup: number;
  calls: number;
  idleMs: number;
}

/** PG15 flushes a backend's counters when it goes idle at most once a second, else within 10 s. */
const STATS_SETTLE_MS = 11_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Read through a connection to another database, so the probe's own statements are not counted. */
async function snapshot(probe: pg.Client, database: string): Promise<PgWork> {
  await probe.query('SELECT pg_stat_clear_snapshot()');
  const stats = await probe.query(
    `SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_returned + tup_fetched AS read,
            pg_current_wal_lsn()::text AS lsn
       FROM pg_stat_database WHERE datname = $1`,
    [database],
  );
  const backends = await probe.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
    [database],
  );
  const ticks = new Map<number, number>();
  for (const { pid } of backends.rows) {
    const value = cpuTicks(pid);
    if (value !== undefined) ticks.set(pid, value);
  }
  const row = stats.rows[0];
  if (!row) throw new Error(`postgres cost: no pg_stat_database row for ${database}`);
  return {
    commits: Number(row.xact_commit),
    rollbacks: Number(row.xact_rollback),
    inserted: Number(row.tup_inserted),
    updated: Number(row.tup_updated),
    deleted: Number(row.tup_deleted),
    read: Number(row.read),
    lsn: row.lsn,
    ticks,
    at: performance.now(),
  };
}

/**
 * Totals of a window: counter deltas, and the CPU of every backend seen at its end (a backend that
 * started inside the window counts from zero; one that exited inside it is lost, said in the report).
 */
async function windowOf(
  before: PgWork,
  after: PgWork,
  walOf: (from: string, to: string) => Promise<{ own: number | undefined; server: number }>,
  tickMs: number,
): Promise<PgCostRow> {
  let ticks = 0;
  for (const [pid, value] of after.ticks) ticks += value - (before.ticks.get(pid) ?? 0);
  const wal = await walOf(before.lsn, after.lsn);
  return {
    transactions: after.commits - before.commits + (after.rollbacks - before.rollbacks),
    rowsInserted: after.inserted - before.inserted,
    rowsUpdated: after.updated - before.updated,
    rowsDeleted: after.deleted - before.deleted,
    rowsRead: after.read - before.read,
    walBytes: wal.own,
    walBytesServer: wal.server,
    cpuMs: ticks * tickMs,
  };
}

const scale = (row: PgCostRow, by: number): PgCostRow => ({
  transactions: row.transactions * by,
  rowsInserted: row.rowsInserted * by,
  rowsUpdated: row.rowsUpdated * by,
  rowsDeleted: row.rowsDeleted * by,
  rowsRead: row.rowsRead * by,
  walBytes: row.walBytes === undefined ? undefined : row.walBytes * by,
  walBytesServer: row.walBytesServer * by,
  cpuMs: row.cpuMs * by,
});

const minus = (a: PgCostRow, b: PgCostRow): PgCostRow => ({
  transactions: a.transactions - b.transactions,
  rowsInserted: a.rowsInserted - b.rowsInserted,
  rowsUpdated: a.rowsUpdated - b.rowsUpdated,
  rowsDeleted: a.rowsDeleted - b.rowsDeleted,
  rowsRead: a.rowsRead - b.rowsRead,
  walBytes: a.walBytes === undefined || b.walBytes === undefined ? undefined : a.walBytes - b.walBytes,
  walBytesServer: a.walBytesServer - b.walBytesServer,
  cpuMs: a.cpuMs - b.cpuMs,
});

/**
 * What one tool call costs PostgreSQL on the postgres backend, next to `redis cost`: a worker and a
 * dispatcher whose queue schema is in a database of the scenario's own (so pg_stat_database counts
 * nothing else), N calls one at a time, PostgreSQL's counters before and after, the fleet's idle work
 * (measured first) taken off. WAL is attributed to the database by pg_walinspect when it can be created.
 */
export function postgresCost(options: PostgresCostOptions): Promise<PostgresCostResult> {
  return withScope(async (scope) => {
    const database = `bench_cost_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const admin = new pg.Client({
      connectionString: DATABASE_URL,
      application_name: 'switchyard-bench-probe',
    });
    await admin.connect();
    scope.add({
      close: async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
        await admin.end();
      },
    });
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${database}`;
    const databaseUrl = url.toString();

    const fleet = scope.add(
      benchFleetOn(
        'postgres',
        'bench-pg-cost',
        () => ({
          idem: exampleServer('recorder', { idempotent: ['echo'] }),
          once: exampleServer('recorder', { nonIdempotent: ['echo'] }),
        }),
        databaseUrl,
      ),
    );
    progress('postgres cost: a worker and a dispatcher on a database of their own');
    await fleet.startWorker({ id: 'w-pg-cost' });
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-pg-cost');
    for (const server of ['idem', 'once'])
      for (let i = 0; i < options.warmup; i++)
        await dispatchOk(dispatcher, ids, server, 'echo', { text: 'x' });

    // pg_walinspect reads the WAL afterwards, from a connection to the scenario's database.
    const inspector = new pg.Client({
      connectionString: databaseUrl,
      application_name: 'switchyard-bench-probe',
    });
    await inspector.connect();
    scope.add({ close: () => inspector.end() });
    const walinspect = await inspector
      .query('CREATE EXTENSION IF NOT EXISTS pg_walinspect')
      .then(() => true)
      .catch(() => false);
    const dbOid = Number(
      (await admin.query('SELECT oid FROM pg_database WHERE datname = $1', [database])).rows[0]?.oid,
    );
    const walOf = async (from: string, to: string) => {
      const server = Number(
        (await admin.query('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) AS bytes', [from, to])).rows[0]
          ?.bytes,
      );
      if (!walinspect) return { own: undefined, server };
      // Records touching the database's relations, plus the commit records of their transactions.
      const own = await inspector.query(
        `WITH r AS (SELECT * FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
              mine AS (SELECT * FROM r WHERE block_ref LIKE $3),
              xids AS (SELECT DISTINCT xid FROM mine WHERE xid <> 0)
         SELECT coalesce(sum(record_length), 0) AS bytes FROM (
           SELECT record_length FROM mine
           UNION ALL
           SELECT record_length FROM r WHERE resource_manager = 'Transaction' AND xid IN (SELECT xid FROM xids)
         ) t`,
        [from, to, `%/${dbOid}/%`],
      );
      return { own: Number(own.rows[0]?.bytes), server };
    };
    const tickMs = 1000 / clockTicksPerSecond();

    const probe = new pg.Client({
      connectionString: DATABASE_URL,
      application_name: 'switchyard-bench-probe',
    });
    await probe.connect();
    scope.add({ close: () => probe.end() });

    progress(
      `postgres cost: quiet window (${options.idleMs} ms, after ${STATS_SETTLE_MS} ms for the counters to settle)`,
    );
    await sleep(STATS_SETTLE_MS);
    const quietStart = await snapshot(probe, database);
    await sleep(options.idleMs);
    const quietEnd = await snapshot(probe, database);

    const windows: Array<{ before: PgWork; after: PgWork }> = [];
    for (const server of ['idem', 'once']) {
      progress(`postgres cost: ${options.calls} calls on ${server}`);
      const before = await snapshot(probe, database);
      for (let i = 0; i < options.calls; i++)
        await dispatchOk(dispatcher, ids, server, 'echo', { text: 'x' });
      await sleep(STATS_SETTLE_MS);
      windows.push({ before, after: await snapshot(probe, database) });
    }

    const connections: Record<string, number> = {};
    const named = await probe.query<{ name: string; count: string }>(
      `SELECT application_name AS name, count(*) AS count FROM pg_stat_activity
        WHERE datname = $1 AND backend_type = 'client backend' AND application_name <> 'switchyard-bench-probe'
        GROUP BY 1`,
      [database],
    );
    for (const row of named.rows)
      connections[row.name.replace(/-w-pg-cost/, '') || '(unnamed)'] = Number(row.count);
    const maxConnections = Number((await probe.query('SHOW max_connections')).rows[0]?.max_connections);

    // Counted only now: the WAL reads must not fall inside a measured window.
    const idleSeconds = (quietEnd.at - quietStart.at) / 1000;
    const idlePerSecond = scale(await windowOf(quietStart, quietEnd, walOf, tickMs), 1 / idleSeconds);
    const perCall = async ({ before, after }: { before: PgWork; after: PgWork }) => {
      const seconds = (after.at - before.at) / 1000;
      const total = await windowOf(before, after, walOf, tickMs);
      return scale(minus(total, scale(idlePerSecond, seconds)), 1 / options.calls);
    };
    const [idemWindow, onceWindow] = windows;
    if (!idemWindow || !onceWindow) throw new Error('postgres cost: a window is missing');
    const idempotent = await perCall(idemWindow);
    const nonIdempotent = await perCall(onceWindow);
    progress(
      `postgres cost: ${idempotent.transactions.toFixed(1)} / ${nonIdempotent.transactions.toFixed(1)} transactions, ` +
        `${idempotent.cpuMs.toFixed(2)} / ${nonIdempotent.cpuMs.toFixed(2)} ms CPU per idempotent / non-idempotent call`,
    );
    return {
      calls: options.calls,
      counting: walinspect
        ? 'transactions and rows from pg_stat_database (pg_stat_statements is not loaded); WAL by pg_walinspect'
        : 'transactions and rows from pg_stat_database (pg_stat_statements is not loaded); WAL of the whole server',
      idempotent,
      nonIdempotent,
      idlePerSecond,
      connections,
      maxConnections,
    };
  });
}
