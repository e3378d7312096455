import { PROCESS_NODE_FLAGS, redisKeys, WorkerHeartbeatSchema } from '@switchyard/contracts';
import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import type { RunMode } from '../../support/paths.ts';
import { all, BENCH_PROCESS_ENV, progress, withScope } from '../harness.ts';
import { cpuMsOf } from '../process-cpu.ts';
import { RssSampler, rssOf } from '../rss.ts';
import { mib } from '../stats.ts';
import { runJob } from './orchestrator.ts';

/** RSS in bytes of each kind of process. */
export interface ProcessRss {
  orchestrator: number;
  worker: number;
  /** The worker's one stdio example MCP server (recorder). */
  server: number;
}

/** How the processes were started: from source or compiled, with which Node flags. */
export type ModeName = 'source' | 'compiled' | 'compiled-default-young-generation';

export interface ModeRss {
  /** Absent in results written before the young-generation variant existed: then `mode` names it. */
  name?: ModeName;
  mode: RunMode;
  /** The Node flags of the orchestrator and the worker. */
  nodeFlags?: string[];
  /** Started, one small job run (so what a job needs is loaded), then quiet. */
  idle: ProcessRss;
  /** Peaks while `jobs` concurrent batch jobs ran. */
  load: ProcessRss;
  /** The load: its calls per second, and each process's CPU per call in ms (the scavenges' cost shows here). */
  throughput?: { callsPerSecond: number; orchestratorCpuMsPerCall: number; workerCpuMsPerCall: number };
}

export interface RssByModeOptions {
  jobs: number;
  callsPerJob: number;
  toolMs: number;
}

/** What `npm run bench` runs. */
export const RSS_BY_MODE_SETTINGS: RssByModeOptions = { jobs: 40, callsPerJob: 25, toolMs: 10 };

export interface RssByModeResult extends RssByModeOptions {
  modes: ModeRss[];
}

interface Mode {
  name: ModeName;
  mode: RunMode;
  nodeFlags: readonly string[];
}

/**
 * As shipped from source and compiled (with PROCESS_NODE_FLAGS), and compiled without them: what the
 * young-generation cap saves in RSS and costs in CPU per call, side by side.
 */
const MODES: Mode[] = [
  { name: 'source', mode: 'source', nodeFlags: PROCESS_NODE_FLAGS },
  { name: 'compiled', mode: 'compiled', nodeFlags: PROCESS_NODE_FLAGS },
  { name: 'compiled-default-young-generation', mode: 'compiled', nodeFlags: [] },
];

const recordJob = (calls: number, ms: number) => ({
  kind: 'batch',
  calls: Array.from({ length: calls }, () => ({ tool: 'wide__record', arguments: { ms } })),
});

/**
 * The same deployment (an orchestrator, a worker, one stdio recorder server) run from the TypeScript
 * sources under tsx and as the compiled JavaScript of `npm run build`, one after the other: RSS of each
 * process at idle and under load.
 */
export async function rssByMode(options: RssByModeOptions): Promise<RssByModeResult> {
  const modes: ModeRss[] = [];
  for (const mode of MODES) modes.push(await measure(mode, options));
  return { ...options, modes };
}

function measure({ name, mode, nodeFlags }: Mode, options: RssByModeOptions): Promise<ModeRss> {
  return withScope(async (scope) => {
    const deployment = scope.add(
      new Deployment(
        `bench-rss-${name}`,
        () => ({
          wide: exampleServer('recorder', { idempotent: ['echo', 'record'], concurrency: 16 }, mode),
        }),
        {
          teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 1000 } },
          orchestrator: { agentRunConcurrency: 200, lockDurationMs: 30_000, stalledIntervalMs: 15_000 },
        },
      ),
    );
    deployment.runMode = mode;
    deployment.nodeFlags = nodeFlags;
    Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
    progress(`rss (${name}): starting a worker and an orchestrator`);
    const [worker, orchestrator] = await all([
      deployment.startWorker({ id: `w-rss-${name}` }),
      deployment.startOrchestrator(`o-rss-${name}`),
    ]);
    // The MCP server's pid as the worker reports it: under tsx the worker has an esbuild helper child too.
    const beat = await deployment.redis.hget(redisKeys.workers(deployment.prefix), `w-rss-${name}`);
    const serverPid = beat ? WorkerHeartbeatSchema.parse(JSON.parse(beat)).sessions.wide?.pid : undefined;
    if (!serverPid) throw new Error(`rss (${name}): the worker reports no process for its server`);
    const pids: Record<keyof ProcessRss, number> = {
      orchestrator: orchestrator.process.pid,
      worker: worker.pid,
      server: serverPid,
    };
    const api = deployment.api('alpha');
    await runJob(api, recordJob(5, 1));
    const idle: ProcessRss = {
      orchestrator: rssOf(pids.orchestrator),
      worker: rssOf(pids.worker),
      server: rssOf(pids.server),
    };

    progress(`rss (${name}): ${options.jobs} concurrent batch jobs of ${options.callsPerJob} calls`);
    const samplers = {
      orchestrator: new RssSampler(pids.orchestrator),
      worker: new RssSampler(pids.worker),
      server: new RssSampler(pids.server),
    };
    const cpuBefore = { orchestrator: cpuMsOf(pids.orchestrator), worker: cpuMsOf(pids.worker) };
    const loadStarted = performance.now();
    await Promise.all(
      Array.from({ length: options.jobs }, () => runJob(api, recordJob(options.callsPerJob, options.toolMs))),
    );
    const calls = options.jobs * options.callsPerJob;
    const throughput = {
      callsPerSecond: calls / ((performance.now() - loadStarted) / 1000),
      orchestratorCpuMsPerCall: (cpuMsOf(pids.orchestrator) - cpuBefore.orchestrator) / calls,
      workerCpuMsPerCall: (cpuMsOf(pids.worker) - cpuBefore.worker) / calls,
    };
    const load: ProcessRss = {
      orchestrator: samplers.orchestrator.stop(),
      worker: samplers.worker.stop(),
      server: samplers.server.stop(),
    };
    progress(
      `rss (${name}): idle orchestrator ${mib(idle.orchestrator)}, worker ${mib(idle.worker)}, server ${mib(idle.server)}; ` +
        `under load ${mib(load.orchestrator)}, ${mib(load.worker)}, ${mib(load.server)}; ` +
        `${throughput.callsPerSecond.toFixed(0)} calls/s, CPU per call ${throughput.orchestratorCpuMsPerCall.toFixed(2)} / ${throughput.workerCpuMsPerCall.toFixed(2)} ms`,
    );
    return { name, mode, nodeFlags: [...nodeFlags], idle, load, throughput };
  });
}
