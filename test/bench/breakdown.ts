/**
 * Where the time of one job and of one serialized call goes (docs/capacity.md, "Where the time goes").
 * Not a benchmark of record: it prints what one run saw, for reading next to `npm run bench`.
 *
 * - timeline: a batch job of one echo call and an agent job of two tool steps through a real orchestrator,
 *   worker and MCP server, exported over OTLP to an in-process receiver: the spans of the last run, and
 *   the PostgreSQL queries each job's trace made, by kind.
 * - handoff: 100 calls of a tool that takes `ms` on a `concurrency: 1` server with one worker: the time
 *   between one call's end and the next call's start on the server, split into the worker's parts.
 *
 * Run: `npm run bench:breakdown`
 */
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { CallIds, dispatchBurst, progress, withScope } from './harness.ts';
import { median } from './stats.ts';

const REPETITIONS = 20;
const echo = { arguments: { text: 'x' } };
const jobs = {
  batch: { kind: 'batch', calls: [{ tool: 'wide__echo', ...echo }] },
  agent: {
    kind: 'agent',
    input: 'breakdown',
    model: {
      provider: 'scripted',
      script: [
        { toolCalls: [{ tool: 'recorder__echo', ...echo }] },
        { toolCalls: [{ tool: 'recorder__echo', ...echo }] },
        { final: 'done' },
      ],
    },
    limits: { maxSteps: 9, maxToolCalls: 9 },
  },
};

/** A query span's statement, cut to what tells the kinds apart. */
function queryKind(span: ReceivedSpan): string | undefined {
  const text = span.attributes['db.query.text'] ?? span.attributes['db.statement'];
  if (typeof text !== 'string') return undefined;
  return text
    .replace(/\s+/g, ' ')
    .replace(/"sy_test_[0-9a-f]+"\./g, '')
    .slice(0, 60);
}

function printTrace(spans: ReceivedSpan[], origin: number): void {
  for (const span of [...spans].sort((a, b) => a.startMs - b.startMs)) {
    const at = (span.startMs - origin).toFixed(1).padStart(6);
    const took = span.durationMs.toFixed(2).padStart(6);
    console.log(
      `${at} ms +${took} ms  ${span.service.replace('switchyard-', '')}  ${queryKind(span) ?? span.name}`,
    );
  }
}

async function timeline(): Promise<void> {
  const receiver = new OtlpReceiver();
  await receiver.start();
  await withScope(async (scope) => {
    scope.add({ close: () => receiver.stop() });
    const deployment = scope.add(
      new Deployment(
        'breakdown',
        () => ({
          recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
          wide: exampleServer('recorder', { idempotent: ['echo'], concurrency: 64 }),
        }),
        { teams: { alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 100 } } },
      ),
    );
    Object.assign(deployment.processEnv, {
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    progress('breakdown: starting a worker and an orchestrator');
    await Promise.all([
      deployment.startWorker({ id: 'w-breakdown' }),
      deployment.startOrchestrator('o-breakdown'),
    ]);
    const api = deployment.api('alpha');
    for (const [kind, body] of Object.entries(jobs)) {
      const roundTrips: number[] = [];
      const kinds = new Map<string, number>();
      let last: { traceId: string; origin: number } | undefined;
      for (let index = 0; index < REPETITIONS; index++) {
        const origin = performance.timeOrigin + performance.now();
        const submitted = await api.submit(body);
        const events = await api.events(submitted.body.id);
        roundTrips.push(performance.timeOrigin + performance.now() - origin);
        if (events.at(-1)?.data.status !== 'succeeded') throw new Error(`${kind} job did not succeed`);
        last = { traceId: String(submitted.body.traceId), origin };
      }
      if (!last) continue;
      // The exporter sends in batches: wait for the last run's span, then one more batch for the event
      // stream's request, which is a trace of its own (the client sent no traceparent).
      const spans = await receiver.waitFor(last.traceId, (found) =>
        found.some((span) => span.name.startsWith('run_batch') || span.name.startsWith('invoke_agent')),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const span of receiver.spans) {
        const query = queryKind(span);
        if (query) kinds.set(query, (kinds.get(query) ?? 0) + 1);
      }
      const queries = [...kinds.values()].reduce((sum, count) => sum + count, 0) / REPETITIONS;
      console.log(
        `\n## ${kind} job: submit → final status event, median of ${REPETITIONS}: ${median(roundTrips).toFixed(1)} ms`,
      );
      console.log(`PostgreSQL queries per job, its event stream's included: ${queries.toFixed(1)}`);
      for (const [query, count] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 15))
        console.log(`${(count / REPETITIONS).toFixed(1).padStart(6)} × ${query}`);
      console.log(`\nspans of the last ${kind} job (ms from submit):`);
      printTrace(spans, last.origin);
      receiver.spans.length = 0;
    }
  });
}

async function handoff(ms: number): Promise<void> {
  await withScope(async (scope) => {
    const deployment = scope.add(
      new Deployment('breakdown-handoff', () => ({
        serial: exampleServer('recorder', { idempotent: ['record'], concurrency: 1 }),
      })),
    );
    Object.assign(deployment.processEnv, { LOG_LEVEL: 'info' });
    await deployment.startWorker({ id: 'w-handoff' });
    const dispatcher = await deployment.dispatcher();
    const ids = new CallIds('breakdown-handoff');
    const calls = (count: number) =>
      Array.from({ length: count }, () => ({ server: 'serial', tool: 'record', args: { ms } }));
    await dispatchBurst(dispatcher, ids, calls(10));
    const outcomes = await dispatchBurst(dispatcher, ids, calls(100));
    const rows = outcomes
      .map((outcome) => {
        const ran = outcome.structuredContent as { start: number; end: number };
        return {
          sentAt: outcome.startedAt ?? 0,
          start: ran.start,
          end: ran.end,
          finishedAt: outcome.finishedAt,
        };
      })
      .sort((a, b) => a.start - b.start);
    const gaps = rows.slice(1).map((row, index) => row.start - (rows[index]?.end ?? row.start));
    console.log(`\n## serialized hand-off, 100 × record(${ms} ms), one worker`);
    console.log(`server: one call's end → the next call's start, median ${median(gaps).toFixed(2)} ms`);
    console.log(
      `  of which the result reaching the worker and the outcome being built: ${median(rows.map((row) => row.finishedAt - row.end)).toFixed(2)} ms`,
    );
    console.log(
      `  and the worker's send reaching the server's handler: ${median(rows.map((row) => row.start - row.sentAt)).toFixed(2)} ms`,
    );
    console.log(
      '  the rest: BullMQ completing the job and handing over the next (one Lua round trip), the outcome notice, spans and the log line',
    );
  });
}

await timeline();
await handoff(0);
await handoff(20);
