import { redisKeys, WorkerHeartbeatSchema } from '@switchyard/contracts';
import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import type { RunMode } from '../../support/paths.ts';
import { all, BENCH_PROCESS_ENV, progress, withScope } from '../harness.ts';
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

export interface ModeRss {
  mode: RunMode;
  /** Started, one small job run (so what a job needs is loaded), then quiet. */
  idle: ProcessRss;
  /** Peaks while `jobs` concurrent batch jobs ran. */
  load: ProcessRss;
}

export interface RssByModeOptions {
  jobs: number;
  callsPerJob: number;
  toolMs: number;
}

export interface RssByModeResult extends RssByModeOptions {
  modes: ModeRss[];
}

const MODES: RunMode[] = ['source', 'compiled'];

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

function measure(mode: RunMode, options: RssByModeOptions): Promise<ModeRss> {
  return withScope(async (scope) => {
    const deployment = scope.add(
      new Deployment(
        `bench-rss-${mode}`,
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
    Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
    progress(`rss (${mode}): starting a worker and an orchestrator`);
    const [worker, orchestrator] = await all([
      deployment.startWorker({ id: `w-rss-${mode}` }),
      deployment.startOrchestrator(`o-rss-${mode}`),
    ]);
    // The MCP server's pid as the worker reports it: under tsx the worker has an esbuild helper child too.
    const beat = await deployment.redis.hget(redisKeys.workers(deployment.prefix), `w-rss-${mode}`);
    const serverPid = beat ? WorkerHeartbeatSchema.parse(JSON.parse(beat)).sessions.wide?.pid : undefined;
    if (!serverPid) throw new Error(`rss (${mode}): the worker reports no process for its server`);
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

    progress(`rss (${mode}): ${options.jobs} concurrent batch jobs of ${options.callsPerJob} calls`);
    const samplers = {
      orchestrator: new RssSampler(pids.orchestrator),
      worker: new RssSampler(pids.worker),
      server: new RssSampler(pids.server),
    };
    await Promise.all(
      Array.from({ length: options.jobs }, () => runJob(api, recordJob(options.callsPerJob, options.toolMs))),
    );
    const load: ProcessRss = {
      orchestrator: samplers.orchestrator.stop(),
      worker: samplers.worker.stop(),
      server: samplers.server.stop(),
    };
    progress(
      `rss (${mode}): idle orchestrator ${mib(idle.orchestrator)}, worker ${mib(idle.worker)}, server ${mib(idle.server)}; ` +
        `under load ${mib(load.orchestrator)}, ${mib(load.worker)}, ${mib(load.server)}`,
    );
    return { mode, idle, load };
  });
}
