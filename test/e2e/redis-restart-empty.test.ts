import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { SuiteContention } from '../support/contention.ts';
import { Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const FINAL = new Set(['succeeded', 'completed_with_errors', 'failed', 'cancelled']);
const BATCHES = 3;
const CALLS_PER_BATCH = 3;
/** Every job final this long after Redis came back (the old behaviour: `running` forever). */
const FINAL_WITHIN_MS = 120_000;

/**
 * Issue 20: PostgreSQL is the record and Redis is rebuilt from it. A Redis without persistence is
 * SIGKILLed while non-idempotent two-second calls run and restarts empty on the same port: the
 * `{agent-runs}` jobs and the tool-call jobs are gone. Every job must still end by itself (its run
 * queued again from PostgreSQL, resumed from its checkpoint), every call with one outcome, none run
 * twice, and a call whose queue job was lost after it may have run is `indeterminate`, never `ok` twice.
 */
describe('Redis restarted empty while calls run', () => {
  const redis = new DedicatedRedis({ persistent: false });
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let api: ApiClient;

  const contention = new SuiteContention('redis restarted empty (e2e)');

  beforeAll(async () => {
    await contention.start();
    await redis.start();
    deployment = new Deployment(
      'redis-restart-empty',
      (dir) => ({
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, concurrency: 2 }),
      }),
      { redisUrl: redis.url, orchestrator: { reconcileEveryMs: 2_000 } },
    );
    await deployment.startWorker({ id: 'w-restart-empty' });
    orchestrator = await deployment.startOrchestrator('o-restart-empty');
    api = orchestrator.api('alpha');
  }, 180_000);

  afterAll(async () => {
    await contention.stop();
    await deployment?.close();
    await redis.stop();
  });

  /** Batches of two-second notes, and an agent whose second turn is dispatched after the fault. */
  async function submitWork(client: ApiClient, tag: string): Promise<string[]> {
    const ids: string[] = [];
    for (let batch = 0; batch < BATCHES; batch += 1) {
      const calls = Array.from({ length: CALLS_PER_BATCH }, (_, index) => ({
        tool: 'notes__add_note',
        arguments: { text: `${tag}-b${batch}-${index}`, delayMs: 2_000 },
      }));
      const submitted = await client.submit({ kind: 'batch', calls });
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
      ids.push(submitted.body.id);
    }
    const agent = await client.submit({
      kind: 'agent',
      input: 'Write two notes.',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { id: 'a1', tool: 'notes__add_note', arguments: { text: `${tag}-agent-1`, delayMs: 2_000 } },
            ],
          },
          { toolCalls: [{ id: 'a2', tool: 'notes__add_note', arguments: { text: `${tag}-agent-2` } }] },
          { final: 'Two notes written.' },
        ],
      },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    ids.push(agent.body.id);
    // A call of this round is running at its server: the moment to lose Redis.
    await waitForLedger(
      deployment.path('notes.jsonl'),
      (rows) => rows.some((row) => row.phase === 'start' && String(row.text).startsWith(`${tag}-`)),
      60_000,
    );
    return ids;
  }

  /** Every job final within the bound, each call with one truthful outcome, none run twice. */
  async function expectSettledTruthfully(client: ApiClient, ids: string[], tag: string, since: number) {
    const jobs: Json[] = [];
    for (const id of ids)
      jobs.push(
        await client.finishedDespiteOutages(id, Math.max(1_000, since + FINAL_WITHIN_MS - Date.now())),
      );
    for (const job of jobs) expect(FINAL.has(job.status), `job ${job.id} is ${job.status}`).toBe(true);

    const starts = new Map<string, number>();
    for (const row of readLedger(deployment.path('notes.jsonl')))
      if (row.phase === 'start') starts.set(String(row.text), (starts.get(String(row.text)) ?? 0) + 1);
    const calls = jobs.flatMap((job) => job.toolCalls as Json[]);
    expect(calls).toHaveLength(BATCHES * CALLS_PER_BATCH + 2);
    const summary = JSON.stringify(calls.map((call) => [call.arguments.text, call.outcome?.status]));
    const lost: Json[] = [];
    for (const call of calls) {
      const text = String(call.arguments.text);
      const ran = starts.get(text) ?? 0;
      expect(call.outcome, `call ${text} has its one outcome`).toBeTruthy();
      expect(ran, `note ${text} ran at most once: ${summary}`).toBeLessThanOrEqual(1);
      if (call.outcome.executed === 'yes') expect(ran, `note ${text} reported executed`).toBe(1);
      if (call.outcome.executed === 'no') expect(ran, `note ${text} reported not run`).toBe(0);
      // A call that ran without an `ok` of its own lost its queue job: it may have run, it is not re-run.
      if (ran === 1 && call.outcome.status !== 'ok') {
        expect(call.outcome, `note ${text}`).toMatchObject({ status: 'indeterminate', executed: 'unknown' });
        lost.push(call);
      }
      if (call.outcome.status === 'indeterminate')
        expect(call.outcome.text, `note ${text}`).toMatch(/Redis lost (its|the) queue entry/);
    }
    // The fault really hit a call in flight: at least the one running at the kill lost its job.
    expect(lost.length, summary).toBeGreaterThan(0);
    // Dispatched after Redis came back: it ran, once, and said so.
    const second = calls.find((call) => call.arguments.text === `${tag}-agent-2`);
    expect(second?.outcome, summary).toMatchObject({ status: 'ok', executed: 'yes' });
  }

  const requeuedLine = (log: Json) =>
    log.msg === 'runs re-queued from PostgreSQL: their {agent-runs} entries were gone';

  it('ends every job, runs no call twice and says `indeterminate` for calls lost after they may have run', {
    timeout: 300_000,
  }, async () => {
    const ids = await submitWork(api, 'live');
    await redis.restartEmpty();
    await expectSettledTruthfully(api, ids, 'live', Date.now());
    // The runs came back from PostgreSQL: the reconciler queued them again.
    expect(orchestrator.process.logs.some(requeuedLine)).toBe(true);
  });

  it('decides from PostgreSQL alone when the replica went down with Redis (a node lost)', {
    timeout: 300_000,
  }, async () => {
    // The replica dies with Redis, so the one after it knows nothing but the record: every call of a
    // re-queued run is judged by the epoch it was dispatched under, not by a wait still in memory.
    const ids = await submitWork(api, 'node');
    await orchestrator.process.crash();
    await redis.restartEmpty();
    const since = Date.now();
    const after = await deployment.startOrchestrator('o-after-restart');
    await expectSettledTruthfully(after.api('alpha'), ids, 'node', since);
    expect(after.process.logs.some(requeuedLine)).toBe(true);
  });
});
