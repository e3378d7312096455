import { bullmqBinding, type RedisConnection, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { Queue, QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import type { LogLine, TestProcess } from '../support/processes.ts';

/** The value of one counter series on a replica's /metrics (0 when the series is absent). */
async function counter(orchestrator: Orchestrator, series: string): Promise<number> {
  const text = await (await fetch(`${orchestrator.url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Resolves on the `count`-th log line of `process` that matches. */
function nthLog(process: TestProcess, match: (log: LogLine) => boolean, count: number, what: string) {
  let seen = 0;
  return process.waitFor((log) => match(log) && ++seen === count, what, 90_000);
}

const searches = (query: string, count: number) =>
  Array.from({ length: count }, (_, index) => ({
    tool: 'search__search',
    arguments: { query, limit: index + 1 },
  }));

/**
 * Per-team quotas: maxConcurrentJobs refuses a job with 429 + Retry-After; callsPerMinute never
 * refuses a call but queues it with a delay until its slot, counted fleet-wide across replicas.
 */
describe('per-team quotas', () => {
  let deployment: Deployment;
  let first: Orchestrator;
  let second: Orchestrator;
  let ledger: string;
  let searchQueue: Queue;
  let searchEvents: QueueEvents;
  /** Redis only: QueueEvents blocks its connection on the events stream (on postgres it LISTENs). */
  let eventsConnection: RedisConnection | undefined;
  /** Ids of the calls BullMQ reports added to the search queue with a delay. */
  const delayedCalls = new Set<string>();
  const delayWaiters = new Set<() => void>();
  /** Resolves once `count` calls of `jobId` have been queued with a delay (BullMQ's own event). */
  const untilDelayed = (jobId: string, count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${count} delayed calls of ${jobId}`)), 90_000);
      const check = () => {
        // Batch calls are `call-<n>`; their queue ids are derived from the job's id and theirs.
        const ids = [1, 2, 3].map((n) => toolCallJobId(jobId, `call-${n}`));
        if (ids.filter((id) => delayedCalls.has(id)).length < count) return;
        clearTimeout(timer);
        delayWaiters.delete(check);
        resolve();
      };
      delayWaiters.add(check);
      check();
    });

  beforeAll(async () => {
    deployment = new Deployment(
      'quotas',
      (dir) => ({
        search: exampleServer('search', { trusted: true, env: { SEARCH_LEDGER: `${dir}/search.jsonl` } }),
        slow: exampleServer('slow'),
      }),
      {
        teams: {
          // 2 a minute: two calls pass at once, then one every 30 s.
          alpha: { apiKeys: [TEAM_KEYS.alpha], callsPerMinute: 2 },
          beta: { apiKeys: [TEAM_KEYS.beta], maxConcurrentJobs: 1 },
          // 6 a minute: six at once, then one every 10 s.
          searchers: { apiKeys: [TEAM_KEYS.searchers], callsPerMinute: 6 },
        },
        // One run per replica: a second job must run on the other replica.
        orchestrator: { agentRunConcurrency: 1 },
      },
    );
    ledger = deployment.path('search.jsonl');
    await deployment.startWorker();
    [first, second] = await Promise.all([
      deployment.startOrchestrator('o-quota-1'),
      deployment.startOrchestrator('o-quota-2'),
    ]);
    const store = await deployment.suiteStore();
    const binding = bullmqBinding(store);
    searchQueue = new Queue(toolQueueName('search'), binding.options, binding.factory as never);
    if (store.kind === 'redis') {
      // QueueEvents blocks its connection on the events stream: its own, closed after it.
      eventsConnection = store.redis.duplicate();
      searchEvents = new QueueEvents(toolQueueName('search'), {
        connection: eventsConnection,
        prefix: deployment.prefix,
      });
    } else {
      searchEvents = new QueueEvents(toolQueueName('search'), binding.options, binding.factory as never);
    }
    searchEvents.on('delayed', ({ jobId }) => {
      delayedCalls.add(jobId);
      for (const waiter of [...delayWaiters]) waiter();
    });
    await searchEvents.waitUntilReady();
  });

  afterAll(async () => {
    await searchEvents?.close();
    await eventsConnection?.quit();
    await searchQueue?.close();
    await deployment?.close();
  });

  const executed = (query: string) =>
    readLedger(ledger).filter((row) => (row.arguments as Json)?.query === query).length;

  it('maxConcurrentJobs: the job past the limit is refused 429 with Retry-After, naming the key', async () => {
    const beta = first.api('beta');
    const hanging = await beta.submit({ kind: 'batch', calls: [{ tool: 'slow__hang', arguments: {} }] });
    expect(hanging.status).toBe(201);
    const refused = await second.api('beta').submit({ kind: 'batch', calls: searches('beta', 1) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(refused.body)).toContain('teams.beta.maxConcurrentJobs');
    expect(
      await counter(second, 'switchyard_quota_rejections_total{team="beta",quota="maxConcurrentJobs"}'),
    ).toBe(1);

    expect((await beta.request('POST', `/v1/jobs/${hanging.body.id}/cancel`)).status).toBe(200);
    await beta.finished(hanging.body.id);
    // With the first job ended, the team may submit again.
    const accepted = await second.api('beta').submit({ kind: 'batch', calls: searches('beta', 1) });
    expect(accepted.status).toBe(201);
    expect((await beta.finished(accepted.body.id)).status).toBe('succeeded');
  });

  it('callsPerMinute: a call past the limit is delayed, not failed, and then runs', async () => {
    const searchers = first.api('searchers');
    const before =
      (await counter(first, 'switchyard_quota_delayed_calls_total{team="searchers"}')) +
      (await counter(second, 'switchyard_quota_delayed_calls_total{team="searchers"}'));
    const submitted = await searchers.submit({ kind: 'batch', calls: searches('searchers', 7) });
    const job = await searchers.finished(submitted.body.id, 120_000);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls.map((call: Json) => call.outcome.status)).toEqual(Array(7).fill('ok'));
    expect(executed('searchers')).toBe(7);
    const after =
      (await counter(first, 'switchyard_quota_delayed_calls_total{team="searchers"}')) +
      (await counter(second, 'switchyard_quota_delayed_calls_total{team="searchers"}'));
    expect(after - before).toBe(1);
  });

  it('callsPerMinute is one budget for the team across two replicas', async () => {
    const alpha = first.api('alpha');
    const replicas = [first, second];
    const runStarted = (jobId: string) =>
      Promise.race(
        replicas.map((replica) =>
          replica.process
            .waitFor((log) => log.msg === 'run started' && log.job_id === jobId, `run of ${jobId}`, 90_000)
            .then(() => replica),
        ),
      );

    // Job A takes the whole budget (2 calls) and waits for its third call's slot, holding its replica.
    const a = await alpha.submit({ kind: 'batch', calls: searches('alpha-a', 3) });
    const runsA = await runStarted(a.body.id);
    await nthLog(
      runsA.process,
      (log) => log.msg === 'tool call settled' && log.job_id === a.body.id,
      2,
      'the first two calls of A',
    );
    // Job B can only run on the other replica (one run per replica), which finds no budget left.
    const b = await second.api('alpha').submit({ kind: 'batch', calls: searches('alpha-b', 3) });
    const runsB = await runStarted(b.body.id);
    expect(runsB).not.toBe(runsA);
    await nthLog(
      runsB.process,
      (log) => log.msg === 'call delayed by the team callsPerMinute' && log.job_id === b.body.id,
      3,
      'the three calls of B delayed',
    );

    await Promise.all([untilDelayed(a.body.id, 1), untilDelayed(b.body.id, 3)]);
    expect(executed('alpha-a')).toBe(2);
    expect(executed('alpha-b')).toBe(0);
    expect(await searchQueue.getDelayedCount()).toBe(4);
    expect(await counter(runsA, 'switchyard_quota_delayed_calls_total{team="alpha"}')).toBe(1);
    expect(await counter(runsB, 'switchyard_quota_delayed_calls_total{team="alpha"}')).toBe(3);

    // A delayed call that never ran is cancelled with the job, and says it never executed.
    for (const id of [a.body.id, b.body.id]) {
      expect((await alpha.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    }
    // The job ends `cancelled` at once; each call records its own outcome when its run hears the cancel.
    const settled = (replica: Orchestrator, jobId: string) =>
      nthLog(
        replica.process,
        (log) => log.msg === 'tool call settled' && log.job_id === jobId,
        3,
        `every call of ${jobId} settled`,
      );
    await Promise.all([settled(runsA, a.body.id), settled(runsB, b.body.id)]);
    const [jobA, jobB] = await Promise.all([alpha.finished(a.body.id), alpha.finished(b.body.id)]);
    const outcomes = (job: Json) =>
      job.toolCalls.map((call: Json) => `${call.outcome.status}/${call.outcome.executed}`).sort();
    expect(outcomes(jobA)).toEqual(['cancelled/no', 'ok/yes', 'ok/yes']);
    expect(outcomes(jobB)).toEqual(['cancelled/no', 'cancelled/no', 'cancelled/no']);
    expect(executed('alpha-b')).toBe(0);

    // Tool-call outcomes and jobs carry the team label.
    const metrics = await (await fetch(`${runsA.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_tool_call_outcomes_total\{server="search",status="ok",team="alpha"\} 2/,
    );
    const submittedSeries = 'switchyard_jobs_submitted_total{kind="batch",team="alpha"}';
    expect((await counter(first, submittedSeries)) + (await counter(second, submittedSeries))).toBe(2);
  });
});
