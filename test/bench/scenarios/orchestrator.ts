import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import type { ApiClient } from '../../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../../support/deployment.ts';
import { exampleServer } from '../../support/fleet.ts';
import { WITH_POSTGRES } from '../backends.ts';
import {
  all,
  BENCH_PROCESS_ENV,
  CallIds,
  dispatchBurst,
  dispatchOk,
  progress,
  rotate,
  withScope,
} from '../harness.ts';
import { type Backend, PostgresDeployment } from '../postgres-fleet.ts';
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
  /**
   * The direct call, agent steps, batch calls and job round trips on PostgreSQL alone (queues and job
   * store in one database), taking turns with the Redis deployment's; absent: not measured.
   */
  postgres?: Pick<OrchestratorResult, 'directCall' | 'agent' | 'batch' | 'jobRoundTrip'>;
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
    const servers = () => ({
      recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
      wide: exampleServer('recorder', { idempotent: ['echo', 'record'], concurrency: 64 }),
    });
    const settings = {
      teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 1000 } },
      // The config schema's defaults, except enough concurrent runs for the memory measurement.
      orchestrator: { agentRunConcurrency: 200, lockDurationMs: 30_000, stalledIntervalMs: 15_000 },
    };
    const backends: Backend[] = WITH_POSTGRES ? ['redis', 'postgres'] : ['redis'];
    const sides = {} as Record<Backend, { api: ApiClient; dispatcher: ToolCallDispatcher; pid: number }>;
    for (const backend of backends) {
      const deployment = scope.add(
        backend === 'redis'
          ? new Deployment('bench-orch', servers, settings)
          : new PostgresDeployment('bench-orch-pg', servers, settings),
      );
      Object.assign(deployment.processEnv, BENCH_PROCESS_ENV);
      progress(`orchestrator: starting a worker and an orchestrator (${backend})`);
      const suffix = backend === 'redis' ? '' : '-pg';
      const [, orchestratorProcess] = await all([
        deployment.startWorker({ id: `w-orch${suffix}` }),
        deployment.startOrchestrator(`o-bench${suffix}`),
      ]);
      sides[backend] = {
        api: deployment.api('alpha'),
        dispatcher: await deployment.dispatcher(),
        pid: orchestratorProcess.process.pid as number,
      };
    }
    const ids = new CallIds('bench-orch-direct');
    const echo = { tool: 'recorder__echo', arguments: { text: 'x' } };
    const wideEchoes = (count: number) =>
      Array.from({ length: count }, () => ({ server: 'wide', tool: 'echo', args: { text: 'x' } }));

    progress('orchestrator: warming up');
    for (const backend of backends) {
      const { api, dispatcher } = sides[backend];
      for (let i = 0; i < 20; i++) await dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' });
      await runJob(api, agentJob(3, echo));
      await runJob(api, batchJob(50));
      await dispatchBurst(dispatcher, ids, wideEchoes(50));
    }

    // Every phase below runs on each backend in turn, the backends taking turns going first.
    const measured = {} as Record<Backend, NonNullable<OrchestratorResult['postgres']>>;
    const raw = Object.fromEntries(
      backends.map((backend) => [
        backend,
        {
          direct: [] as number[],
          shortMs: [] as number[],
          longMs: [] as number[],
          batchMs: [] as number[],
          directMs: [] as number[],
          roundTrips: [] as number[],
        },
      ]),
    ) as Record<
      Backend,
      Record<'direct' | 'shortMs' | 'longMs' | 'batchMs' | 'directMs' | 'roundTrips', number[]>
    >;

    progress('orchestrator: agent steps');
    const perRepetition = Math.ceil(options.directCalls / options.agentRepetitions);
    for (let repetition = 0; repetition < options.agentRepetitions; repetition++)
      for (const backend of rotate(backends, repetition)) {
        const { api, dispatcher } = sides[backend];
        const own = raw[backend];
        for (let i = 0; i < perRepetition; i++)
          own.direct.push(await timed(() => dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' })));
        own.shortMs.push(durationMs(await runJob(api, agentJob(options.shortSteps, echo))));
        own.longMs.push(durationMs(await runJob(api, agentJob(options.longSteps, echo))));
      }

    progress('orchestrator: batch calls');
    for (let repetition = 0; repetition < options.batchRepetitions; repetition++)
      for (const backend of rotate(backends, repetition)) {
        const { api, dispatcher } = sides[backend];
        raw[backend].batchMs.push(durationMs(await runJob(api, batchJob(options.batchCalls))));
        raw[backend].directMs.push(
          await timed(() => dispatchBurst(dispatcher, ids, wideEchoes(options.batchCalls))),
        );
      }

    progress('orchestrator: job round trips');
    for (let i = 0; i < options.roundTrips; i++)
      for (const backend of rotate(backends, i))
        raw[backend].roundTrips.push(await roundTrip(sides[backend].api, batchJob(1)));

    for (const backend of backends) {
      const own = raw[backend];
      const directCall = summarize(own.direct);
      const perStepMs = (median(own.longMs) - median(own.shortMs)) / (options.longSteps - options.shortSteps);
      const perCallMs = median(own.batchMs) / options.batchCalls;
      const directPerCallMs = median(own.directMs) / options.batchCalls;
      measured[backend] = {
        directCall,
        agent: {
          shortSteps: options.shortSteps,
          longSteps: options.longSteps,
          shortMs: own.shortMs,
          longMs: own.longMs,
          perStepMs,
          overheadPerStepMs: perStepMs - directCall.p50,
        },
        batch: {
          calls: options.batchCalls,
          batchMs: own.batchMs,
          directMs: own.directMs,
          perCallMs,
          directPerCallMs,
          overheadPerCallMs: perCallMs - directPerCallMs,
        },
        jobRoundTrip: summarize(own.roundTrips),
      };
      progress(
        `orchestrator (${backend}): agent step ${perStepMs.toFixed(1)} ms, batch call overhead ${(perCallMs - directPerCallMs).toFixed(2)} ms, job round trip p50 ${summarize(own.roundTrips).p50.toFixed(1)} ms`,
      );
    }

    const { api, pid } = sides.redis;
    const idleRss = rssOf(pid);
    const concurrent: ConcurrentRuns[] = [];
    for (const jobs of options.concurrentJobs) {
      progress(`orchestrator: ${jobs} concurrent agent runs`);
      const sampler = new RssSampler(pid);
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
      ...measured.redis,
      idleRss,
      toolMs: options.toolMs,
      concurrent,
      ...(measured.postgres ? { postgres: measured.postgres } : {}),
    };
  });
}
