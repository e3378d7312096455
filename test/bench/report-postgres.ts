import type { LanesResult } from './scenarios/lanes.ts';
import type { LatencyResult } from './scenarios/latency.ts';
import type { OrchestratorResult } from './scenarios/orchestrator.ts';
import type { ParallelResult } from './scenarios/parallel.ts';
import type { PgCostRow, PostgresCostResult } from './scenarios/postgres-cost.ts';
import type { SerializedResult } from './scenarios/serialized.ts';
import { ms, perSecond, ratio } from './stats.ts';

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;

/** The scenarios with a PostgreSQL side; any may be missing (a partial run, SWITCHYARD_BENCH_ONLY). */
export interface PostgresSides {
  latency?: LatencyResult;
  serialized?: SerializedResult;
  parallel?: ParallelResult;
  lanes?: LanesResult;
  orchestrator?: OrchestratorResult;
  postgresCost?: PostgresCostResult;
}

const HEAD = ['measure', 'Redis', 'PostgreSQL', 'PostgreSQL / Redis'];
const RIGHT = [false, true, true, true];

/**
 * "PostgreSQL next to Redis": every per-call figure measured on both backends in the same run, the
 * paths taking turns, with the ratio PostgreSQL / Redis (above 1× = PostgreSQL takes longer or, for
 * rates, see the row: a rate's ratio below 1× means PostgreSQL is slower).
 */
export function renderPostgres(results: PostgresSides, table: Table): string {
  const rows: string[][] = [];
  const timeRow = (label: string, redis: number, postgres: number) => [
    label,
    ms(redis),
    ms(postgres),
    ratio(postgres, redis),
  ];
  const rateRow = (label: string, redis: number, postgres: number) => [
    label,
    perSecond(redis),
    perSecond(postgres),
    ratio(postgres, redis),
  ];
  const shareRow = (label: string, redis: number, postgres: number) => [
    label,
    redis.toFixed(2),
    postgres.toFixed(2),
    ratio(postgres, redis),
  ];
  const { latency, serialized, parallel, lanes, orchestrator } = results;
  if (latency?.postgres) {
    const pg = latency.postgres;
    rows.push(
      timeRow('one echo call, p50 (Switchyard)', latency.switchyard.p50, pg.switchyard.p50),
      timeRow('one echo call, p99 (Switchyard)', latency.switchyard.p99, pg.switchyard.p99),
      timeRow('one job, p50 (bare BullMQ floor)', latency.floor.p50, pg.floor.p50),
      timeRow('one job, p99 (bare BullMQ floor)', latency.floor.p99, pg.floor.p99),
      [
        'Switchyard p50 / its floor',
        ratio(latency.switchyard.p50, latency.floor.p50),
        ratio(pg.switchyard.p50, pg.floor.p50),
        '',
      ],
    );
  }
  if (serialized?.postgres) {
    const pg = serialized.postgres;
    serialized.sizes.forEach((size, index) => {
      const redis = serialized.switchyard[index]?.perSecond ?? 0;
      const onPg = pg.switchyard[index]?.perSecond ?? 0;
      rows.push(
        rateRow(`serialized echo, one \`concurrency: 1\` server, ${size} calls (Switchyard)`, redis, onPg),
        rateRow(
          `serialized no-op, global concurrency 1, ${size} jobs (bare BullMQ floor)`,
          serialized.floor[index]?.perSecond ?? 0,
          pg.floor[index]?.perSecond ?? 0,
        ),
      );
    });
  }
  if (lanes?.postgres) {
    lanes.serial.forEach((lane, index) => {
      const onPg = lanes.postgres?.serial[index];
      if (!onPg) return;
      rows.push(
        shareRow(
          `serialized ${lanes.toolMs} ms lane, ${lane.workers} worker(s): efficiency (1 = one call per tool time)`,
          lane.median.efficiency,
          onPg.median.efficiency,
        ),
      );
    });
    for (const mode of ['teams', 'fifo'] as const) {
      const mean = (runs: LanesResult['fairness']) => {
        const own = runs.filter((run) => run.fairness === mode);
        return own.reduce((sum, run) => sum + run.aWaitCalls, 0) / Math.max(1, own.length);
      };
      rows.push(
        shareRow(
          `fair share \`${mode}\`: team A's one call waited (calls' time, ${lanes.floodCalls}-call flood of team B)`,
          mean(lanes.fairness),
          mean(lanes.postgres.fairness),
        ),
      );
    }
  }
  if (parallel?.postgres) {
    parallel.runs.forEach((run, index) => {
      const onPg = parallel.postgres?.runs[index];
      if (!onPg) return;
      rows.push(
        shareRow(
          `parallel efficiency, ${run.servers} server(s) × ${parallel.toolMs} ms tool, 2 workers`,
          run.efficiency,
          onPg.efficiency,
        ),
      );
    });
  }
  if (orchestrator?.postgres) {
    const pg = orchestrator.postgres;
    rows.push(
      timeRow(
        'orchestrator: one agent step (a tool call and a model turn)',
        orchestrator.agent.perStepMs,
        pg.agent.perStepMs,
      ),
      timeRow(
        'orchestrator: agent step beyond its tool call',
        orchestrator.agent.overheadPerStepMs,
        pg.agent.overheadPerStepMs,
      ),
      timeRow(
        `orchestrator: per call of a ${orchestrator.batch.calls}-call batch job beyond dispatching directly`,
        orchestrator.batch.overheadPerCallMs,
        pg.batch.overheadPerCallMs,
      ),
      timeRow(
        'orchestrator: job round trip p50 (submit → final SSE event)',
        orchestrator.jobRoundTrip.p50,
        pg.jobRoundTrip.p50,
      ),
    );
  }
  const out: string[] = [];
  if (rows.length > 0)
    out.push(
      '**PostgreSQL next to Redis** (`SWITCHYARD_BACKEND=postgres`, no Redis: queues, fence, outcomes and the ' +
        "rest in one PostgreSQL database): the same paths measured in the same rounds, taking turns with Redis's. " +
        "Floors are bare BullMQ on each backend (PostgreSQL: BullMQ's `createPostgresBackend` on a fresh schema). " +
        'Times: lower is better; rates and efficiencies: higher is better.',
      table(HEAD, RIGHT, rows),
    );
  if (results.postgresCost) out.push(renderPostgresCost(results.postgresCost, table));
  return out.join('\n\n');
}

const bytes = (value: number | undefined) =>
  value === undefined
    ? 'not measured'
    : value >= 1024
      ? `${(value / 1024).toFixed(1)} KB`
      : `${value.toFixed(0)} B`;

function renderPostgresCost(cost: PostgresCostResult, table: Table): string {
  const line = (label: string, value: (row: PgCostRow) => string) => [
    label,
    value(cost.idempotent),
    value(cost.nonIdempotent),
    value(cost.idlePerSecond),
  ];
  const cpu = (row: PgCostRow) => `${row.cpuMs.toFixed(2)} ms`;
  return [
    `**What one call costs PostgreSQL** (${cost.calls} echo calls one at a time; ${cost.counting}; ` +
      'CPU of the backend processes serving the fleet, from /proc; the idle rate measured first and taken off):',
    table(
      ['', 'idempotent call', 'non-idempotent call (fenced)', 'fleet at rest, per second'],
      [false, true, true, true],
      [
        line('transactions committed', (row) => row.transactions.toFixed(1)),
        line('rows inserted', (row) => row.rowsInserted.toFixed(1)),
        line('rows updated', (row) => row.rowsUpdated.toFixed(1)),
        line('rows deleted', (row) => row.rowsDeleted.toFixed(1)),
        line('rows read', (row) => row.rowsRead.toFixed(0)),
        line('WAL bytes (its database)', (row) => bytes(row.walBytes)),
        line('WAL bytes (whole server, other work included)', (row) => bytes(row.walBytesServer)),
        line('PostgreSQL CPU', cpu),
        [
          'calls/s per PostgreSQL core (1 / CPU)',
          cost.idempotent.cpuMs > 0 ? (1000 / cost.idempotent.cpuMs).toFixed(0) : '—',
          cost.nonIdempotent.cpuMs > 0 ? (1000 / cost.nonIdempotent.cpuMs).toFixed(0) : '—',
          '',
        ],
      ],
    ),
    `Connections to the database while the fleet (one worker on two servers, a dispatcher) runs: ${Object.entries(
      cost.connections,
    )
      .map(([name, count]) => `${name} ${count}`)
      .join(', ')}; max_connections ${cost.maxConnections}.`,
  ].join('\n\n');
}
