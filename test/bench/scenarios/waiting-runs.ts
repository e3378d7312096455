import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import {
  all,
  BENCH_PROCESS_ENV,
  CallIds,
  dispatchOk,
  PRODUCTION_WORKER_SETTINGS,
  progress,
  withScope,
} from '../harness.ts';
import { type EndedJob, JobEndWatch } from '../job-end-watch.ts';
import { type EventLoopDelay, scrapeProcessMetrics } from '../process-metrics.ts';
import { RssSampler, rssOf } from '../rss.ts';
import { median, type Summary, summarize, timed } from '../stats.ts';
import { runJob } from './orchestrator.ts';

export interface WaitingRunsOptions {
  /** Agent jobs submitted at once to the one replica. */
  jobs: number;
  /** What a model step waits before it answers (the scripted model's `delayMs`), like a real model. */
  modelDelayMs: number;
  /** `orchestrator.agentRunConcurrency` of each pass, one deployment each. */
  concurrencies: number[];
  /** POST /v1/jobs requests in flight while submitting. */
  submitInFlight: number;
  /** How long the idle replica's event-loop delay is read before the burst (the baseline). */
  idleMs: number;
  /** A pass whose jobs have not all ended by then fails. */
  timeoutMs: number;
}

/** Sized for a few minutes on 2 cores, most of it the current default's pass waiting out its waves. */
export const WAITING_RUNS_SETTINGS: WaitingRunsOptions = {
  jobs: 1000,
  modelDelayMs: 2_000,
  concurrencies: [20, 100, 200, 1000],
  submitInFlight: 20,
  idleMs: 5_000,
  timeoutMs: 600_000,
};

/** Model steps of each run: one that asks for the tool call, one that answers after it. */
const MODEL_STEPS = 2;

export interface WaitingRunsPass {
  agentRunConcurrency: number;
  /** The run's tool call alone: an echo dispatched directly to the same worker (p50, ms). */
  toolMs: number;
  /** MODEL_STEPS × modelDelayMs + toolMs: one run with nothing else costing anything. */
  idealRunMs: number;
  /** jobs / idealRunMs: every run at once (unlimited concurrency). */
  idealPerSecond: number;
  /** First created → last finished (job rows, PostgreSQL's clock). */
  wallMs: number;
  perSecond: number;
  /** perSecond / idealPerSecond. */
  efficiency: number;
  /** Client side: the first POST /v1/jobs sent → the last one answered. */
  submitMs: number;
  /** Created → finished of each job: what its submitter waited. */
  jobMs: Summary;
  /** Created → started: the wait for a run slot. */
  queuedMs: Summary;
  /** Started → finished: the run itself, against idealRunMs. */
  runMs: Summary;
  rss: { idle: number; peak: number; end: number };
  /** Idle for idleMs before the burst, then over the burst (first submit → last end). */
  eventLoop: { idle: EventLoopDelay; burst: EventLoopDelay };
  /**
   * The replica's CPU over the burst per job (submit, runs, events): one event loop does at most
   * 1000 / cpuMsPerJob jobs a second, whatever the concurrency.
   */
  cpuMsPerJob: number;
}

export interface WaitingRunsResult extends WaitingRunsOptions {
  passes: WaitingRunsPass[];
}

const agentJob = (delayMs: number) => ({
  kind: 'agent',
  input: 'benchmark',
  model: {
    provider: 'scripted',
    script: [
      { toolCalls: [{ tool: 'recorder__echo', arguments: { text: 'x' } }], delayMs },
      { final: 'done', delayMs },
    ],
  },
});

/**
 * Many agent runs that mostly wait on their model, on one orchestrator replica with one worker: each
 * run is a model step of `modelDelayMs`, one echo call, and a second model step of `modelDelayMs`.
 * Throughput against the ideal of every run at once, the replica's RSS and its event-loop delay, once
 * per `agentRunConcurrency`.
 */
export async function waitingRuns(options: WaitingRunsOptions): Promise<WaitingRunsResult> {
  const passes: WaitingRunsPass[] = [];
  for (const concurrency of options.concurrencies) passes.push(await pass(options, concurrency));
  return { ...options, passes };
}

function pass(options: WaitingRunsOptions, concurrency: number): Promise<WaitingRunsPass> {
  return withScope(async (scope) => {
    const label = `waiting runs (agentRunConcurrency ${concurrency})`;
    const deployment = scope.add(
      new Deployment(
        `bench-wait-${concurrency}`,
        () => ({ recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 64 }) }),
        {
          teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: options.jobs } },
          // The config schema's defaults but the concurrency under test.
          orchestrator: {
            agentRunConcurrency: concurrency,
            lockDurationMs: 30_000,
            stalledIntervalMs: 15_000,
          },
          worker: PRODUCTION_WORKER_SETTINGS,
        },
      ),
    );
    Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
    progress(`${label}: starting a worker and an orchestrator`);
    const [, orchestrator] = await all([
      deployment.startWorker({ id: `w-wait-${concurrency}` }),
      deployment.startOrchestrator(`o-wait-${concurrency}`),
    ]);
    const pid = orchestrator.process.pid as number;
    const api = orchestrator.api('alpha');

    // Loads every code path of a run and measures the tool call the ideal counts.
    const dispatcher = await deployment.dispatcher();
    const ids = new CallIds(`bench-wait-direct-${concurrency}`);
    for (let i = 0; i < 3; i++) await runJob(api, agentJob(0));
    const direct: number[] = [];
    for (let i = 0; i < 20; i++)
      direct.push(await timed(() => dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' })));
    const toolMs = median(direct);

    await scrapeProcessMetrics(orchestrator.url);
    await new Promise((resolve) => setTimeout(resolve, options.idleMs));
    const idle = await scrapeProcessMetrics(orchestrator.url);
    const idleRss = rssOf(pid);

    const watch = scope.add(
      await JobEndWatch.open(await deployment.suiteStore(), deployment.databaseUrl, deployment.schema),
    );
    progress(`${label}: submitting ${options.jobs} jobs`);
    const before = await scrapeProcessMetrics(orchestrator.url);
    const sampler = new RssSampler(pid, 100);
    const submitMs = await timed(() => submitAll(options, (id) => watch.expect(id), api.submit.bind(api)));
    progress(`${label}: submitted in ${(submitMs / 1000).toFixed(1)} s; waiting for the runs to end`);
    const ended = await watch.allEnded(options.timeoutMs);
    const peakRss = sampler.stop();
    const endRss = rssOf(pid);
    const burst = await scrapeProcessMetrics(orchestrator.url);
    const burstLoop = burst.eventLoop;

    const failed = ended.filter((job) => job.status !== 'succeeded');
    if (failed.length > 0)
      throw new Error(`${label}: ${failed.length} jobs did not succeed, e.g. ${JSON.stringify(failed[0])}`);
    const result = measure(options, concurrency, toolMs, ended);
    progress(
      `${label}: ${result.perSecond.toFixed(1)} jobs/s of an ideal ${result.idealPerSecond.toFixed(1)} ` +
        `(${result.efficiency.toFixed(2)}), peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB, ` +
        `event-loop delay p99 ${burstLoop.p99.toFixed(1)} ms`,
    );
    return {
      ...result,
      submitMs,
      rss: { idle: idleRss, peak: peakRss, end: endRss },
      eventLoop: { idle: idle.eventLoop, burst: burstLoop },
      cpuMsPerJob: ((burst.cpuSeconds - before.cpuSeconds) * 1000) / options.jobs,
    };
  });
}

/** Submits every job, `submitInFlight` requests at a time, telling `submitted` each new job's id. */
async function submitAll(
  options: WaitingRunsOptions,
  submitted: (id: string) => void,
  submit: (body: unknown) => Promise<{ status: number; body: { id?: unknown } }>,
): Promise<void> {
  const body = agentJob(options.modelDelayMs);
  let next = 0;
  const sender = async () => {
    while (next < options.jobs) {
      next += 1;
      const answer = await submit(body);
      if (answer.status !== 201 || typeof answer.body.id !== 'string')
        throw new Error(`submit: HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      submitted(answer.body.id);
    }
  };
  await all(Array.from({ length: options.submitInFlight }, sender));
}

function measure(
  options: WaitingRunsOptions,
  concurrency: number,
  toolMs: number,
  ended: EndedJob[],
): Omit<WaitingRunsPass, 'submitMs' | 'rss' | 'eventLoop' | 'cpuMsPerJob'> {
  const idealRunMs = MODEL_STEPS * options.modelDelayMs + toolMs;
  const idealPerSecond = options.jobs / (idealRunMs / 1000);
  const wallMs =
    Math.max(...ended.map((job) => job.finishedAt)) - Math.min(...ended.map((job) => job.createdAt));
  const perSecond = options.jobs / (wallMs / 1000);
  return {
    agentRunConcurrency: concurrency,
    toolMs,
    idealRunMs,
    idealPerSecond,
    wallMs,
    perSecond,
    efficiency: perSecond / idealPerSecond,
    jobMs: summarize(ended.map((job) => job.finishedAt - job.createdAt)),
    queuedMs: summarize(ended.map((job) => job.startedAt - job.createdAt)),
    runMs: summarize(ended.map((job) => job.finishedAt - job.startedAt)),
  };
}
