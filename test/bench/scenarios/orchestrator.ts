import type { ApiClient } from '../../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import {
  all,
  BENCH_PROCESS_ENV,
  CallIds,
  dispatchBurst,
  dispatchOk,
  progress,
  withScope,
} from '../harness.ts';
import { RssSampler, rssOf } from '../rss.ts';
import { median, type Summary, summarize, timed } from '../stats.ts';

/** The fields of GET /v1/jobs/:id this benchmark reads. */
interface JobView {
  id: string;
  status: string;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  toolCalls: Array<{ status: string }>;
}

export interface ConcurrentRuns {
  jobs: number;
  /** Peak orchestrator RSS (bytes) while they ran. */
  peakRss: number;
  /** First submitted → last finished, from the job records. */
  wallMs: number;
  perSecond: number;
  /** Jobs / tool time: every run's one tool call running at once, nothing else costing anything. */
  idealPerSecond: number;
}

export interface OrchestratorResult {
  /** Sequential echo calls dispatched directly (no orchestrator) to the concurrency-1 server. */
  directCall: Summary;
  agent: {
    shortSteps: number;
    longSteps: number;
    /** Run time (started → finished, job record) of each repetition. */
    shortMs: number[];
    longMs: number[];
    /** (median long − median short) / (long − short steps). */
    perStepMs: number;
    /** perStepMs − directCall.p50: what a step costs beyond its one tool call. */
    overheadPerStepMs: number;
  };
  batch: {
    calls: number;
    /** Run time of a batch job of `calls` echo calls (job record). */
    batchMs: number[];
    /** The same calls dispatched at once directly. */
    directMs: number[];
    perCallMs: number;
    directPerCallMs: number;
    overheadPerCallMs: number;
  };
  /** Submit → final status event of a batch job with one echo call, client side. */
  jobRoundTrip: Summary;
  idleRss: number;
  toolMs: number;
  concurrent: ConcurrentRuns[];
}

export interface OrchestratorOptions {
  directCalls: number;
  shortSteps: number;
  longSteps: number;
  agentRepetitions: number;
  batchCalls: number;
  batchRepetitions: number;
  roundTrips: number;
  /** e.g. [5, 50]: concurrent agent runs, each with one call of `toolMs`. */
  concurrentJobs: number[];
  toolMs: number;
}

/**
 * Submit → the final status event on the job's SSE stream: what a client waits for. Whether the job
 * succeeded is checked from that event, so no further request is timed.
 */
async function roundTrip(api: ApiClient, body: unknown): Promise<number> {
  const started = performance.now();
  const submitted = await api.submit(body);
  if (submitted.status !== 201)
    throw new Error(`submit: HTTP ${submitted.status} ${JSON.stringify(submitted.body).slice(0, 500)}`);
  const events = await api.events(submitted.body.id);
  const elapsed = performance.now() - started;
  const final = events.at(-1)?.data.status;
  if (final !== 'succeeded') throw new Error(`job ${submitted.body.id} ended ${String(final)}`);
  return elapsed;
}

const durationMs = (job: JobView) => Date.parse(job.finishedAt ?? '') - Date.parse(job.startedAt ?? '');

/** Submits a job and waits (SSE) until it has ended; throws unless it succeeded with every call ok. */
export async function runJob(api: ApiClient, body: unknown): Promise<JobView> {
  const submitted = await api.submit(body);
  if (submitted.status !== 201)
    throw new Error(`submit: HTTP ${submitted.status} ${JSON.stringify(submitted.body).slice(0, 500)}`);
  const job: JobView = await api.finished(submitted.body.id, 120_000);
  const bad = job.toolCalls.filter((call) => call.status !== 'ok');
  if (job.status !== 'succeeded' || bad.length > 0)
    throw new Error(
      `job ${job.id} ended ${job.status} (${job.error ?? ''}) with ${bad.length} calls not ok: ${JSON.stringify(bad[0])}`,
    );
  return job;
}

const agentJob = (steps: number, call: { tool: string; arguments: Record<string, unknown> }) => ({
  kind: 'agent',
  input: 'benchmark',
  model: {
    provider: 'scripted',
    script: [...Array.from({ length: steps }, () => ({ toolCalls: [call] })), { final: 'done' }],
  },
  limits: { maxSteps: steps + 5, maxToolCalls: steps + 5 },
});

const batchJob = (calls: number) => ({
  kind: 'batch',
  calls: Array.from({ length: calls }, () => ({ tool: 'wide__echo', arguments: { text: 'x' } })),
});

/**
 * Orchestrator overhead and memory, through a real orchestrator process on PostgreSQL, one worker and
 * real MCP servers: `recorder` (concurrency 1) for agent steps, `wide` (concurrency 64) for batches
 * and for many concurrent runs.
 */
export function orchestrator(options: OrchestratorOptions): Promise<OrchestratorResult> {
  return withScope(async (scope) => {
    const deployment = scope.add(
      new Deployment(
        'bench-orch',
        () => ({
          recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
          wide: exampleServer('recorder', { idempotent: ['echo', 'record'], concurrency: 64 }),
        }),
        {
          teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 1000 } },
          // The config schema's defaults, except enough concurrent runs for the memory measurement.
          orchestrator: { agentRunConcurrency: 200, lockDurationMs: 30_000, stalledIntervalMs: 15_000 },
        },
      ),
    );
    Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
    progress('orchestrator: starting a worker and an orchestrator');
    const [, orchestratorProcess] = await all([
      deployment.startWorker({ id: 'w-orch' }),
      deployment.startOrchestrator('o-bench'),
    ]);
    const api = deployment.api('alpha');
    const dispatcher = await deployment.dispatcher();
    const ids = new CallIds('bench-orch-direct');
    const echo = { tool: 'recorder__echo', arguments: { text: 'x' } };

    progress('orchestrator: warming up');
    for (let i = 0; i < 20; i++) await dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' });
    await runJob(api, agentJob(3, echo));
    await runJob(api, batchJob(50));
    await dispatchBurst(
      dispatcher,
      ids,
      Array.from({ length: 50 }, () => ({ server: 'wide', tool: 'echo', args: { text: 'x' } })),
    );

    progress('orchestrator: agent steps');
    const direct: number[] = [];
    const directCalls = async (count: number) => {
      for (let i = 0; i < count; i++)
        direct.push(await timed(() => dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' })));
    };
    const shortMs: number[] = [];
    const longMs: number[] = [];
    const perRepetition = Math.ceil(options.directCalls / options.agentRepetitions);
    for (let repetition = 0; repetition < options.agentRepetitions; repetition++) {
      await directCalls(perRepetition);
      shortMs.push(durationMs(await runJob(api, agentJob(options.shortSteps, echo))));
      longMs.push(durationMs(await runJob(api, agentJob(options.longSteps, echo))));
    }
    const directCall = summarize(direct);
    const perStepMs = (median(longMs) - median(shortMs)) / (options.longSteps - options.shortSteps);

    progress('orchestrator: batch calls');
    const batchMs: number[] = [];
    const directMs: number[] = [];
    for (let repetition = 0; repetition < options.batchRepetitions; repetition++) {
      batchMs.push(durationMs(await runJob(api, batchJob(options.batchCalls))));
      directMs.push(
        await timed(() =>
          dispatchBurst(
            dispatcher,
            ids,
            Array.from({ length: options.batchCalls }, () => ({
              server: 'wide',
              tool: 'echo',
              args: { text: 'x' },
            })),
          ),
        ),
      );
    }
    const perCallMs = median(batchMs) / options.batchCalls;
    const directPerCallMs = median(directMs) / options.batchCalls;

    progress('orchestrator: job round trips');
    const roundTrips: number[] = [];
    for (let i = 0; i < options.roundTrips; i++) roundTrips.push(await roundTrip(api, batchJob(1)));

    const idleRss = rssOf(orchestratorProcess.process.pid);
    const concurrent: ConcurrentRuns[] = [];
    for (const jobs of options.concurrentJobs) {
      progress(`orchestrator: ${jobs} concurrent agent runs`);
      const sampler = new RssSampler(orchestratorProcess.process.pid);
      const call = { tool: 'wide__record', arguments: { ms: options.toolMs } };
      const finished = await Promise.all(Array.from({ length: jobs }, () => runJob(api, agentJob(1, call))));
      const peakRss = sampler.stop();
      const wallMs =
        Math.max(...finished.map((job) => Date.parse(job.finishedAt ?? ''))) -
        Math.min(...finished.map((job) => Date.parse(job.createdAt)));
      concurrent.push({
        jobs,
        peakRss,
        wallMs,
        perSecond: jobs / (wallMs / 1000),
        idealPerSecond: jobs / (options.toolMs / 1000),
      });
    }

    return {
      directCall,
      agent: {
        shortSteps: options.shortSteps,
        longSteps: options.longSteps,
        shortMs,
        longMs,
        perStepMs,
        overheadPerStepMs: perStepMs - directCall.p50,
      },
      batch: {
        calls: options.batchCalls,
        batchMs,
        directMs,
        perCallMs,
        directPerCallMs,
        overheadPerCallMs: perCallMs - directPerCallMs,
      },
      jobRoundTrip: summarize(roundTrips),
      idleRss,
      toolMs: options.toolMs,
      concurrent,
    };
  });
}
