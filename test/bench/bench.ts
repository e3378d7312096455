/**
 * `npm run bench`: Switchyard's benchmark against real Redis, PostgreSQL and MCP server processes.
 * Every figure is measured in this one run, and every ratio compares two figures measured side by
 * side. Writes test/bench/results.json, test/bench/results.md and the README's Benchmarks section.
 */
import { EventEmitter } from 'node:events';
import { loadavg } from 'node:os';
import { ONLY, WITH_POSTGRES } from './backends.ts';
import { closeEverything, progress, stopEverythingOnSignals } from './harness.ts';
import { machineInfo } from './machine.ts';
import { type BenchSettings, RESULTS_JSON, RESULTS_MD, table, writeReport } from './report.ts';
import { renderPostgres } from './report-postgres.ts';
import { cluster } from './scenarios/cluster.ts';
import { fencing } from './scenarios/fencing.ts';
import { lanes } from './scenarios/lanes.ts';
import { latency } from './scenarios/latency.ts';
import { MCP_GATEWAY_SETTINGS, mcpGateway } from './scenarios/mcp-gateway.ts';
import { orchestrator } from './scenarios/orchestrator.ts';
import { parallel } from './scenarios/parallel.ts';
import { postgresCost } from './scenarios/postgres-cost.ts';
import { redisCost } from './scenarios/redis-cost.ts';
import { replicaWait } from './scenarios/replica-wait.ts';
import { revisions } from './scenarios/revisions.ts';
import { RSS_BY_MODE_SETTINGS, rssByMode } from './scenarios/rss-modes.ts';
import { serialized } from './scenarios/serialized.ts';
import { WAITING_RUNS_SETTINGS, waitingRuns } from './scenarios/waiting-runs.ts';
import { workerMemory } from './scenarios/worker-memory.ts';

/** Sized to finish in about a quarter of an hour on a 2-core machine (the waiting runs ≈ 9 minutes of it). */
const SETTINGS: BenchSettings = {
  latency: { warmup: 20, rounds: 10, perRound: 30, perCallSessionPerRound: 3 },
  fencing: { warmup: 20, rounds: 10, perRound: 30 },
  replicaWait: { warmup: 20, rounds: 10, perRound: 20 },
  revisions: { warmup: 20, rounds: 10, perRound: 20 },
  redisCost: { warmup: 30, calls: 300, idleMs: 3_000 },
  postgresCost: { warmup: 30, calls: 300, idleMs: 10_000 },
  serialized: { warmup: 50, sizes: [100, 1000], repetitions: 3 },
  cluster: { warmup: 30, rounds: 10, perRound: 40, burst: 500 },
  parallel: { serverCounts: [1, 4, 10], callsPerServer: 100, toolMs: 20, repetitions: 2 },
  lanes: {
    toolMs: 20,
    serialCalls: 100,
    mixedCalls: 300,
    wideConcurrency: 8,
    repetitions: 3,
    floodCalls: 200,
    floodToolMs: 5,
    fairnessRepetitions: 3,
  },
  workerMemory: { sessionCounts: [1, 10], callsPerSession: 50 },
  orchestrator: {
    directCalls: 100,
    shortSteps: 1,
    longSteps: 11,
    agentRepetitions: 4,
    batchCalls: 200,
    batchRepetitions: 3,
    roundTrips: 10,
    concurrentJobs: [5, 50],
    toolMs: 2_000,
  },
  rssByMode: RSS_BY_MODE_SETTINGS,
  mcpGateway: MCP_GATEWAY_SETTINGS,
  waitingRuns: WAITING_RUNS_SETTINGS,
};

/** A run that takes this long is stuck: stop everything and fail. */
const GIVE_UP_AFTER_MS = 35 * 60_000;

// A worker serving ten servers waits for each of them with its own exit listener (test/support/fleet.ts).
EventEmitter.defaultMaxListeners = 64;

async function main(): Promise<void> {
  const started = performance.now();
  const machine = await machineInfo();
  progress(
    `machine: ${machine.nproc} CPUs, Node ${machine.node}, Redis ${machine.redis}, PostgreSQL ${machine.postgres}, load ${machine.loadStart.toFixed(1)}`,
  );
  const date = new Date().toISOString();
  if (ONLY) return partialRun(ONLY);
  const latencyResult = await latency(SETTINGS.latency);
  const fencingResult = await fencing(SETTINGS.fencing);
  const replicaWaitResult = await replicaWait(SETTINGS.replicaWait);
  const revisionsResult = await revisions(SETTINGS.revisions);
  const redisCostResult = await redisCost(SETTINGS.redisCost);
  const postgresCostResult = WITH_POSTGRES ? await postgresCost(SETTINGS.postgresCost) : undefined;
  const serializedResult = await serialized(SETTINGS.serialized);
  const clusterResult = await cluster(SETTINGS.cluster);
  const parallelResult = await parallel(SETTINGS.parallel);
  const lanesResult = await lanes(SETTINGS.lanes);
  const workerMemoryResult = await workerMemory(SETTINGS.workerMemory);
  const orchestratorResult = await orchestrator(SETTINGS.orchestrator);
  const rssByModeResult = await rssByMode(SETTINGS.rssByMode);
  const mcpGatewayResult = await mcpGateway(SETTINGS.mcpGateway);
  const waitingRunsResult = await waitingRuns(SETTINGS.waitingRuns);
  const { markdown, readmeUpdated } = writeReport({
    date,
    durationSeconds: (performance.now() - started) / 1000,
    machine: { ...machine, loadEnd: loadavg()[0] ?? 0 },
    settings: SETTINGS,
    latency: latencyResult,
    fencing: fencingResult,
    replicaWait: replicaWaitResult,
    revisions: revisionsResult,
    redisCost: redisCostResult,
    ...(postgresCostResult ? { postgresCost: postgresCostResult } : {}),
    serialized: serializedResult,
    cluster: clusterResult,
    parallel: parallelResult,
    lanes: lanesResult,
    workerMemory: workerMemoryResult,
    orchestrator: orchestratorResult,
    rssByMode: rssByModeResult,
    mcpGateway: mcpGatewayResult,
    waitingRuns: waitingRunsResult,
  });
  process.stdout.write(`\n${markdown}\n\n`);
  progress(`wrote ${RESULTS_JSON} and ${RESULTS_MD}`);
  if (readmeUpdated) progress('updated the Benchmarks section of README.md');
  else
    progress(
      'README.md has no <!-- bench:start --> / <!-- bench:end --> markers: the table above was not copied into it',
    );
}

/**
 * SWITCHYARD_BENCH_ONLY: only the named scenarios with a PostgreSQL side (latency, serialized, parallel,
 * lanes, orchestrator, postgresCost), each measuring Redis and PostgreSQL in the same rounds; prints the
 * "PostgreSQL next to Redis" tables and leaves results.json and the README alone.
 */
async function partialRun(only: Set<string>): Promise<void> {
  const scenarios = {
    latency: () => latency(SETTINGS.latency),
    serialized: () => serialized(SETTINGS.serialized),
    parallel: () => parallel(SETTINGS.parallel),
    lanes: () => lanes(SETTINGS.lanes),
    orchestrator: () => orchestrator(SETTINGS.orchestrator),
    postgresCost: () => postgresCost(SETTINGS.postgresCost),
  };
  const results: Record<string, unknown> = {};
  for (const [name, run] of Object.entries(scenarios)) if (only.has(name)) results[name] = await run();
  const unknown = [...only].filter((name) => !(name in scenarios));
  if (unknown.length > 0)
    progress(`SWITCHYARD_BENCH_ONLY: no such scenario with a PostgreSQL side: ${unknown.join(', ')}`);
  process.stdout.write(`\n${renderPostgres(results, table)}\n\n`);
}

stopEverythingOnSignals();

const watchdog = setTimeout(() => {
  progress(`FAILED: still running after ${GIVE_UP_AFTER_MS / 60_000} minutes; stopping everything`);
  void closeEverything().finally(() => process.exit(1));
}, GIVE_UP_AFTER_MS);

main().then(
  () => {
    clearTimeout(watchdog);
    progress('done');
    process.exit(0);
  },
  (error: unknown) => {
    clearTimeout(watchdog);
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    // Every scenario closes what it started before its error reaches here.
    void closeEverything().finally(() => process.exit(1));
  },
);
