import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { REPO_ROOT, RUN_MODE } from '../support/paths.ts';
import type { Machine } from './machine.ts';
import { renderCluster } from './report-cluster.ts';
import { renderLanes } from './report-lanes.ts';
import { renderRssByMode } from './report-memory.ts';
import { renderPostgres } from './report-postgres.ts';
import { renderWaitingRuns } from './report-waiting-runs.ts';
import type { ClusterOptions, ClusterResult } from './scenarios/cluster.ts';
import type { FencingOptions, FencingResult } from './scenarios/fencing.ts';
import type { LanesOptions, LanesResult } from './scenarios/lanes.ts';
import type { LatencyOptions, LatencyResult } from './scenarios/latency.ts';
import { type McpGatewayOptions, type McpGatewayResult, renderMcpGateway } from './scenarios/mcp-gateway.ts';
import type { OrchestratorOptions, OrchestratorResult } from './scenarios/orchestrator.ts';
import type { ParallelOptions, ParallelResult } from './scenarios/parallel.ts';
import type { PostgresCostOptions, PostgresCostResult } from './scenarios/postgres-cost.ts';
import type { CostRow, RedisCostOptions, RedisCostResult } from './scenarios/redis-cost.ts';
import {
  type ReplicaWaitOptions,
  type ReplicaWaitResult,
  renderReplicaWait,
} from './scenarios/replica-wait.ts';
import type { RevisionsOptions, RevisionsResult } from './scenarios/revisions.ts';
import type { RssByModeOptions, RssByModeResult } from './scenarios/rss-modes.ts';
import type { SerializedOptions, SerializedResult } from './scenarios/serialized.ts';
import type { WaitingRunsOptions, WaitingRunsResult } from './scenarios/waiting-runs.ts';
import type { WorkerMemoryOptions, WorkerMemoryResult } from './scenarios/worker-memory.ts';
import { mib, ms, perSecond, ratio, type Summary } from './stats.ts';

export interface BenchSettings {
  latency: LatencyOptions;
  fencing: FencingOptions;
  replicaWait: ReplicaWaitOptions;
  revisions: RevisionsOptions;
  redisCost: RedisCostOptions;
  postgresCost: PostgresCostOptions;
  serialized: SerializedOptions;
  cluster: ClusterOptions;
  parallel: ParallelOptions;
  lanes: LanesOptions;
  workerMemory: WorkerMemoryOptions;
  orchestrator: OrchestratorOptions;
  rssByMode: RssByModeOptions;
  mcpGateway: McpGatewayOptions;
  waitingRuns: WaitingRunsOptions;
}

export interface BenchResults {
  date: string;
  durationSeconds: number;
  machine: Machine;
  settings: BenchSettings;
  latency: LatencyResult;
  fencing: FencingResult;
  replicaWait: ReplicaWaitResult;
  revisions: RevisionsResult;
  redisCost: RedisCostResult;
  /** Absent when the PostgreSQL paths were switched off (SWITCHYARD_BENCH_POSTGRES=0). */
  postgresCost?: PostgresCostResult;
  serialized: SerializedResult;
  cluster: ClusterResult;
  parallel: ParallelResult;
  lanes: LanesResult;
  workerMemory: WorkerMemoryResult;
  orchestrator: OrchestratorResult;
  rssByMode: RssByModeResult;
  mcpGateway: McpGatewayResult;
  waitingRuns: WaitingRunsResult;
}

/** The headline ratios, each between two figures of the same run. */
export interface Derived {
  latency: {
    switchyardOverFloor: { p50: number; p99: number; mean: number };
    switchyardOverheadOverFloorMs: { p50: number; p99: number; mean: number };
    switchyardOverheadOverWarmMs: { p50: number };
    perCallSessionOverSwitchyard: { p50: number };
  };
  serialized: { switchyardOverFloor: number; calls: number };
  parallelEfficiency: Array<{ servers: number; efficiency: number }>;
  orchestrator: {
    agentStepMs: number;
    agentStepOverheadMs: number;
    batchCallOverheadMs: number;
    jobRoundTripOverheadMs: number;
  };
  growth: {
    calls: { from: number; to: number; throughput: number; workerPeakRss: number };
    servers: {
      from: number;
      to: number;
      throughput: number;
      workerRss: number;
      workerRssWithChildren: number;
    };
    concurrentJobs: { from: number; to: number; throughput: number; orchestratorPeakRss: number };
  };
}

function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`no ${what} measured`);
  return item;
}

function last<T>(items: readonly T[], what: string): T {
  const item = items.at(-1);
  if (item === undefined) throw new Error(`no ${what} measured`);
  return item;
}

export function derive(results: BenchResults): Derived {
  const { latency, serialized, parallel, workerMemory, orchestrator } = results;
  const serialFloor = last(serialized.floor, 'floor burst');
  const serialSwitchyard = last(serialized.switchyard, 'Switchyard burst');
  const onePar = first(parallel.runs, 'parallel run');
  const mostPar = last(parallel.runs, 'parallel run');
  const fewSessions = first(workerMemory.workers, 'worker');
  const mostSessions = last(workerMemory.workers, 'worker');
  const fewJobs = first(orchestrator.concurrent, 'concurrent run');
  const mostJobs = last(orchestrator.concurrent, 'concurrent run');
  return {
    latency: {
      switchyardOverFloor: {
        p50: latency.switchyard.p50 / latency.floor.p50,
        p99: latency.switchyard.p99 / latency.floor.p99,
        mean: latency.switchyard.mean / latency.floor.mean,
      },
      switchyardOverheadOverFloorMs: {
        p50: latency.switchyard.p50 - latency.floor.p50,
        p99: latency.switchyard.p99 - latency.floor.p99,
        mean: latency.switchyard.mean - latency.floor.mean,
      },
      switchyardOverheadOverWarmMs: { p50: latency.switchyard.p50 - latency.warm.p50 },
      perCallSessionOverSwitchyard: { p50: latency.perCallSession.p50 / latency.switchyard.p50 },
    },
    serialized: {
      switchyardOverFloor: serialSwitchyard.perSecond / serialFloor.perSecond,
      calls: serialSwitchyard.calls,
    },
    parallelEfficiency: parallel.runs.map((run) => ({ servers: run.servers, efficiency: run.efficiency })),
    orchestrator: {
      agentStepMs: orchestrator.agent.perStepMs,
      agentStepOverheadMs: orchestrator.agent.overheadPerStepMs,
      batchCallOverheadMs: orchestrator.batch.overheadPerCallMs,
      jobRoundTripOverheadMs: orchestrator.jobRoundTrip.p50 - orchestrator.directCall.p50,
    },
    growth: {
      calls: {
        from: first(serialized.switchyard, 'burst').calls,
        to: serialSwitchyard.calls,
        throughput: serialSwitchyard.perSecond / first(serialized.switchyard, 'burst').perSecond,
        workerPeakRss: last(serialized.workerPeakRss, 'RSS') / first(serialized.workerPeakRss, 'RSS'),
      },
      servers: {
        from: onePar.servers,
        to: mostPar.servers,
        throughput: mostPar.perSecond / onePar.perSecond,
        workerRss: mostSessions.warm.self / fewSessions.warm.self,
        workerRssWithChildren: mostSessions.warm.withChildren / fewSessions.warm.withChildren,
      },
      concurrentJobs: {
        from: fewJobs.jobs,
        to: mostJobs.jobs,
        throughput: mostJobs.perSecond / fewJobs.perSecond,
        orchestratorPeakRss: mostJobs.peakRss / fewJobs.peakRss,
      },
    },
  };
}

export function table(headers: string[], alignRight: boolean[], rows: string[][]): string {
  const rule = alignRight.map((right) => (right ? '---:' : '---'));
  return [headers, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** How the main scenarios start processes (SWITCHYARD_COMPILED, see test/support/paths.ts). */
const RUN_LABEL = RUN_MODE === 'compiled' ? '`node dist/….js` (compiled)' : '`node --import tsx`';

const plus = (value: number) => `${value >= 0 ? '+' : '−'}${ms(Math.abs(value))}`;

/** The report as Markdown, without a title (it goes under the README's Benchmarks heading). */
export function renderMarkdown(results: BenchResults, derived: Derived): string {
  const { latency: lat, serialized, parallel, workerMemory, orchestrator: orch, machine } = results;
  const out: string[] = [];
  out.push(
    `Measured by \`npm run bench\` on ${results.date.slice(0, 10)} in ${results.durationSeconds.toFixed(0)} s: ` +
      `${machine.nproc} CPUs (${machine.cpu}), ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, ` +
      `Node ${machine.node}, Redis ${machine.redis}, PostgreSQL ${machine.postgres}, ${machine.os}; ` +
      `load average ${machine.loadStart.toFixed(1)} at the start and ${(machine.loadEnd ?? 0).toFixed(1)} at the end. ` +
      'The machine is shared and noisy, so read the ratios: each compares figures measured side by side in ' +
      'this one run. All figures: `test/bench/results.json`.',
  );

  const floorP50 = lat.floor.p50;
  const warmP50 = lat.warm.p50;
  const latencyRow = (label: string, s: LatencyResult['warm']) => [
    label,
    String(s.n),
    ms(s.p50),
    ms(s.p99),
    ms(s.mean),
    ratio(s.p50, warmP50),
    ratio(s.p50, floorP50),
  ];
  out.push(
    `**Latency of one echo call**, one call at a time; the four paths take turns over ${lat.rounds} rounds.`,
    table(
      ['path', 'calls', 'p50', 'p99', 'mean', 'p50 vs warm session', 'p50 vs BullMQ floor'],
      [false, true, true, true, true, true, true],
      [
        latencyRow('warm in-process session (MCP SDK `Client`, stdio)', lat.warm),
        latencyRow('new session per call (spawn, handshake, call)', lat.perCallSession),
        latencyRow('bare BullMQ round trip, no-op worker process (the floor)', lat.floor),
        latencyRow('Switchyard (dispatcher → queue → worker → warm session)', lat.switchyard),
      ],
    ),
    `Switchyard over the floor: ${plus(derived.latency.switchyardOverheadOverFloorMs.p50)} at p50, ` +
      `${plus(derived.latency.switchyardOverheadOverFloorMs.p99)} at p99 ` +
      `(${ratio(lat.switchyard.p50, floorP50)} / ${ratio(lat.switchyard.p99, lat.floor.p99)}); ` +
      `over a warm in-process session ${plus(derived.latency.switchyardOverheadOverWarmMs.p50)} at p50. ` +
      `A new session per call costs ${ratio(lat.perCallSession.p50, lat.switchyard.p50)} Switchyard's p50.`,
  );

  const fence = results.fencing;
  const fenceRow = (label: string, s: Summary) => [label, String(s.n), ms(s.p50), ms(s.p99), ms(s.mean)];
  out.push(
    `**What at-most-once costs**: the same echo, declared idempotent on one server and non-idempotent on ` +
      `another, one call at a time, taking turns over ${fence.rounds} rounds. A non-idempotent call runs two ` +
      'Lua scripts: the fenced send (lock token check + marker) right before the request, and the hold ' +
      '(lock still ours) before its outcome is recorded.',
    table(
      ['tool', 'calls', 'p50', 'p99', 'mean'],
      [false, true, true, true, true],
      [
        fenceRow('idempotent echo', fence.idempotent),
        fenceRow('non-idempotent echo (fenced send)', fence.nonIdempotent),
      ],
    ),
    `The fence adds ${plus(fence.nonIdempotent.p50 - fence.idempotent.p50)} at p50 and ` +
      `${plus(fence.nonIdempotent.p99 - fence.idempotent.p99)} at p99.`,
  );
  out.push(...renderReplicaWait(results.replicaWait, table, { ms, plus }));

  const cost = results.redisCost;
  const costRow = (label: string, row: CostRow) => [
    label,
    row.commands.toFixed(1),
    String(Math.round(row.bytesIn)),
    String(Math.round(row.bytesOut)),
    `${row.cpuMs.toFixed(3)} ms`,
    perSecond(1000 / row.cpuMs),
  ];
  out.push(
    `**What one call costs Redis** (docs/capacity.md): ${cost.calls} calls one at a time on a Redis of the ` +
      "scenario's own, counted by Redis (INFO commandstats, stats and cpu deltas; commands run inside " +
      "BullMQ's and Switchyard's Lua scripts are counted one by one), the fleet's background work measured " +
      'in a quiet window and taken off. "calls/s per primary" is 1 / Redis CPU per call: what one ' +
      'single-threaded primary sustains when the calls are all it does.',
    table(
      ['call', 'Redis commands', 'bytes in', 'bytes out', 'Redis CPU', 'calls/s per primary'],
      [false, true, true, true, true, true],
      [
        costRow('idempotent echo', cost.idempotent),
        costRow('non-idempotent echo (fenced)', cost.nonIdempotent),
      ],
    ),
    `Most frequent per idempotent call: ${cost.idempotent.byCommand
      .slice(0, 8)
      .map((row) => `${row.command} ${row.perCall.toFixed(1)}`)
      .join(', ')}. At rest the fleet (one worker on two servers, one dispatcher) sends ` +
      `${cost.idlePerSecond.commands.toFixed(1)} commands/s and uses ${cost.idlePerSecond.cpuMs.toFixed(2)} ms of ` +
      `Redis CPU per second. Connections: ${Object.entries(cost.connections)
        .map(([name, count]) => `${count} ${name.replace(/^sy-test-[^:]+:/, '<prefix>:')}`)
        .join(', ')}.`,
  );

  const rev = results.revisions;
  out.push(
    '**MCP 2026-07-28 next to 2025-11-25**: the same echo through Switchyard on a 2026-07-28-only server ' +
      '(stateless: revision and capabilities in every request, no session) and on a 2025-11-25 one ' +
      `(initialize session), over stdio and Streamable HTTP, one call at a time, taking turns over ${rev.rounds} rounds.`,
    table(
      ['server', 'calls', 'p50', 'p99', 'mean', 'p50 vs 2025-11-25 on the same transport'],
      [false, true, true, true, true, true],
      [
        [...fenceRow('2026-07-28, stdio', rev.modernStdio), ratio(rev.modernStdio.p50, rev.legacyStdio.p50)],
        [...fenceRow('2025-11-25, stdio', rev.legacyStdio), ratio(rev.legacyStdio.p50, rev.legacyStdio.p50)],
        [
          ...fenceRow('2026-07-28, Streamable HTTP', rev.modernHttp),
          ratio(rev.modernHttp.p50, rev.legacyHttp.p50),
        ],
        [
          ...fenceRow('2025-11-25, Streamable HTTP', rev.legacyHttp),
          ratio(rev.legacyHttp.p50, rev.legacyHttp.p50),
        ],
      ],
    ),
  );

  const sizes = serialized.sizes;
  const serialRow = (
    label: string,
    bursts: SerializedResult['floor'],
    baseline: SerializedResult['floor'],
  ) => [
    label,
    ...bursts.map((burst) => perSecond(burst.perSecond)),
    ...bursts.map((burst, index) =>
      ratio(burst.perSecond, (baseline[index] as { perSecond: number }).perSecond),
    ),
  ];
  out.push(
    `**Throughput of one serialized server** (\`concurrency: 1\`, echo): N calls submitted at once, ` +
      `median of ${results.settings.serialized.repetitions} alternating bursts.`,
    table(
      ['path', ...sizes.map((size) => `${size} calls`), ...sizes.map((size) => `vs floor (${size})`)],
      [false, ...sizes.map(() => true), ...sizes.map(() => true)],
      [
        serialRow(
          'bare BullMQ, `setGlobalConcurrency(1)`, no-op processor (the floor)',
          serialized.floor,
          serialized.floor,
        ),
        serialRow('Switchyard: one server, one worker', serialized.switchyard, serialized.floor),
      ],
    ),
  );

  out.push(...renderCluster(results.cluster, table));

  out.push(
    `**Parallel efficiency**: N servers (\`concurrency: 1\` each) whose tool takes ${parallel.toolMs} ms, ` +
      `${results.settings.parallel.callsPerServer} calls to each submitted at once, ${parallel.workers} worker processes ` +
      'each holding a session to every server.',
    table(
      ['servers', 'calls', `ideal (N / ${parallel.toolMs} ms)`, 'achieved', 'efficiency'],
      [true, true, true, true, true],
      parallel.runs.map((run) => [
        String(run.servers),
        String(run.calls),
        perSecond(run.idealPerSecond),
        perSecond(run.perSecond),
        ratio(run.perSecond, run.idealPerSecond),
      ]),
    ),
  );
  out.push(...renderLanes(results.lanes, table));

  out.push(
    '**Orchestrator overhead**: a real orchestrator on PostgreSQL and one worker; the same calls made ' +
      'directly through the dispatcher are the baseline.',
    table(
      ['measurement', 'through the orchestrator', 'without it', 'overhead', 'ratio'],
      [false, true, true, true, true],
      [
        [
          `agent step: scripted model, one echo call (${orch.agent.longSteps}- vs ${orch.agent.shortSteps}-step runs)`,
          `${ms(orch.agent.perStepMs)} per step`,
          `${ms(orch.directCall.p50)} (one dispatch, p50)`,
          plus(orch.agent.overheadPerStepMs),
          ratio(orch.agent.perStepMs, orch.directCall.p50),
        ],
        [
          `batch call: ${orch.batch.calls} echo calls in one batch job (\`concurrency: 64\` server)`,
          `${ms(orch.batch.perCallMs)} per call`,
          `${ms(orch.batch.directPerCallMs)} (${orch.batch.calls} dispatched at once)`,
          plus(orch.batch.overheadPerCallMs),
          ratio(orch.batch.perCallMs, orch.batch.directPerCallMs),
        ],
        [
          'job round trip: batch of one echo call, submit → final status event (p50)',
          ms(orch.jobRoundTrip.p50),
          `${ms(orch.directCall.p50)} (one dispatch, p50)`,
          plus(derived.orchestrator.jobRoundTripOverheadMs),
          ratio(orch.jobRoundTrip.p50, orch.directCall.p50),
        ],
      ],
    ),
  );

  const fewSessions = workerMemory.workers[0];
  const idle = orch.idleRss;
  const memoryRows: string[][] = workerMemory.workers.map((worker) => [
    'tool worker',
    `${worker.sessions} warm session${worker.sessions === 1 ? '' : 's'} (${workerMemory.callsPerSession} calls per session)`,
    mib(worker.warm.self),
    ratio(worker.warm.self, fewSessions?.warm.self ?? Number.NaN),
    mib(worker.warm.withChildren),
    ratio(worker.warm.withChildren, fewSessions?.warm.withChildren ?? Number.NaN),
  ]);
  memoryRows.push(['orchestrator', 'idle, after the overhead runs', mib(idle), '1.00×', '', '']);
  for (const run of orch.concurrent)
    memoryRows.push([
      'orchestrator',
      `${run.jobs} concurrent agent runs (peak)`,
      mib(run.peakRss),
      ratio(run.peakRss, idle),
      '',
      '',
    ]);
  out.push(
    '**Memory** (RSS). A worker "with children" includes its stdio MCP servers, here each a ' +
      `${RUN_LABEL} process; the orchestrator runs hold one tool call each ` +
      `(${orch.toolMs} ms) while sampled.`,
    table(
      ['process', 'state', 'RSS', 'vs first row', 'with children', 'vs first row'],
      [false, false, true, true, true, true],
      memoryRows,
    ),
  );

  out.push(...renderRssByMode(results.rssByMode, table));

  const growth = derived.growth;
  const serialFirst = serialized.switchyard[0];
  const serialLast = serialized.switchyard.at(-1);
  const parFirst = parallel.runs[0];
  const parLast = parallel.runs.at(-1);
  const sessionsLast = workerMemory.workers.at(-1);
  const jobsFirst = orch.concurrent[0];
  const jobsLast = orch.concurrent.at(-1);
  out.push(
    '**Growth from 1× to 10× the work**: throughput and memory at 10× over the same at 1×.',
    table(
      ['work', '1×', '10×', 'throughput 10× / 1×', 'memory at 1× → 10×', 'memory 10× / 1×'],
      [false, true, true, true, false, true],
      [
        [
          'calls: echo bursts on one serialized server',
          `${growth.calls.from} calls: ${perSecond(serialFirst?.perSecond ?? 0)}`,
          `${growth.calls.to} calls: ${perSecond(serialLast?.perSecond ?? 0)}`,
          `${ratio(growth.calls.throughput, 1)} (steady: 1.00×)`,
          `worker peak ${mib(serialized.workerPeakRss[0] ?? 0)} → ${mib(serialized.workerPeakRss.at(-1) ?? 0)}`,
          ratio(growth.calls.workerPeakRss, 1),
        ],
        [
          `servers: ${parallel.toolMs} ms tool, ${results.settings.parallel.callsPerServer} calls per server`,
          `${growth.servers.from} server: ${perSecond(parFirst?.perSecond ?? 0)}`,
          `${growth.servers.to} servers: ${perSecond(parLast?.perSecond ?? 0)}`,
          `${ratio(growth.servers.throughput, 1)} (ideal ${ratio(growth.servers.to, growth.servers.from)})`,
          `worker ${mib(fewSessions?.warm.self ?? 0)} → ${mib(sessionsLast?.warm.self ?? 0)}; with children ${mib(fewSessions?.warm.withChildren ?? 0)} → ${mib(sessionsLast?.warm.withChildren ?? 0)}`,
          `${ratio(growth.servers.workerRss, 1)}; ${ratio(growth.servers.workerRssWithChildren, 1)}`,
        ],
        [
          `concurrent agent runs, one ${orch.toolMs} ms call each`,
          `${growth.concurrentJobs.from} jobs: ${perSecond(jobsFirst?.perSecond ?? 0)}`,
          `${growth.concurrentJobs.to} jobs: ${perSecond(jobsLast?.perSecond ?? 0)}`,
          `${ratio(growth.concurrentJobs.throughput, 1)} (ideal ${ratio(growth.concurrentJobs.to, growth.concurrentJobs.from)})`,
          `orchestrator peak ${mib(jobsFirst?.peakRss ?? 0)} → ${mib(jobsLast?.peakRss ?? 0)}`,
          ratio(growth.concurrentJobs.orchestratorPeakRss, 1),
        ],
      ],
    ),
  );

  const postgres = renderPostgres(results, table);
  if (postgres) out.push(postgres);

  out.push(renderMcpGateway(results.mcpGateway, table));
  out.push(renderWaitingRuns(results.waitingRuns, table));

  out.push(
    [
      'How it was measured:',
      '- Every MCP server is the example `recorder` (`echo` answers at once; `record` sleeps), over stdio, ' +
        `started as the workers start it: ${RUN_LABEL}` +
        (RUN_MODE === 'source' ? ', so a new session per call pays TypeScript loading too.' : '.'),
      '- Workers and the floor worker are separate processes on the same Redis; Switchyard workers run with the ' +
        "config schema's default settings and log at `info`. The orchestrator scenario uses the test harness's " +
        'deployment (worker heartbeats every 500 ms).',
      '- The floor adds a BullMQ job and awaits it with `QueueEvents`; Switchyard adds the call under its ' +
        'deterministic id, awaits its outcome on the outcomes stream, and the worker validates, calls the tool ' +
        'on its warm session and records the outcome.',
    ].join('\n'),
  );
  return out.join('\n\n');
}

/** Rounds every number for the JSON file: 3 decimals is plenty for milliseconds and ratios. */
function rounded(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value;
}

export const RESULTS_JSON = `${REPO_ROOT}/test/bench/results.json`;
export const RESULTS_MD = `${REPO_ROOT}/test/bench/results.md`;
const README = `${REPO_ROOT}/README.md`;
const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** Lays the JSON out as the repo's formatter does, so `npm run lint` stays clean after a run. */
function formatJson(path: string): void {
  try {
    execFileSync(`${REPO_ROOT}/node_modules/.bin/biome`, ['format', '--write', path], {
      cwd: REPO_ROOT,
      stdio: 'ignore',
    });
  } catch (error) {
    process.stderr.write(`could not format ${path} with biome: ${(error as Error).message}\n`);
  }
}

/** Writes results.json and results.md, and the README section; returns whether the README had the markers. */
export function writeReport(results: BenchResults): { markdown: string; readmeUpdated: boolean } {
  const derived = derive(results);
  const markdown = renderMarkdown(results, derived);
  writeFileSync(RESULTS_JSON, `${JSON.stringify({ ...results, derived }, rounded, 2)}\n`);
  formatJson(RESULTS_JSON);
  writeFileSync(RESULTS_MD, `# Switchyard benchmark\n\n${markdown}\n`);
  const readme = readFileSync(README, 'utf8');
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) return { markdown, readmeUpdated: false };
  writeFileSync(README, `${readme.slice(0, start + START.length)}\n${markdown}\n${readme.slice(end)}`);
  return { markdown, readmeUpdated: true };
}
