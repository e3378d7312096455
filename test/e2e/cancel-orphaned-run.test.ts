import { bullmqBinding, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, submitAndFindRunner } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

/**
 * A job cancelled while no replica runs it (docs/semantics.md §6): the replica running a batch is killed
 * while its first write runs and its second waits in the queue, then the job is cancelled through the
 * other replica. Nobody holds the run to hear the cancel, so the replica that picks the run up once the
 * dead one's lock expires must settle both calls from their queue jobs: the queued write never runs,
 * the running one is reported as possibly run (or with its real result), and neither is left open.
 */
describe('a job cancelled while the replica running it is dead', () => {
  let deployment: Deployment;
  let replicas: Orchestrator[];
  let queue: Queue;

  beforeAll(async () => {
    deployment = new Deployment('cancel-orphan', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, timeoutMs: 120_000 }),
    }));
    // On either backend: the suite's Redis connection, or the queue schema on postgres.
    const binding = bullmqBinding(await deployment.suiteStore());
    queue = new Queue(toolQueueName('notes'), binding.options, binding.factory as never);
    await deployment.startWorker({ id: 'w-orphan' });
    replicas = await Promise.all([
      deployment.startOrchestrator('o-first'),
      deployment.startOrchestrator('o-second'),
    ]);
  }, 180_000);

  afterAll(async () => {
    await queue?.close();
    await deployment?.close();
  });

  it('settles the calls its dead run left open; the queued write never runs', {
    timeout: 180_000,
  }, async () => {
    const { id, doomed, survivor } = await submitAndFindRunner(replicas, {
      kind: 'batch',
      calls: ['orphan-a', 'orphan-b'].map((text) => ({
        tool: 'notes__add_note',
        arguments: { text, delayMs: 40_000 },
      })),
    });
    const rows = await waitForLedger(
      deployment.path('notes.jsonl'),
      (all) => all.some((row) => row.phase === 'start'),
      60_000,
    );
    const started = String(rows.find((row) => row.phase === 'start')?.text);
    const [ran, waited] = started === 'orphan-a' ? ['call-1', 'call-2'] : ['call-2', 'call-1'];
    await vi.waitFor(
      async () =>
        expect(['waiting', 'prioritized']).toContain(await queue.getJobState(toolCallJobId(id, waited))),
      { timeout: 30_000, interval: 50 },
    );
    await doomed.process.crash();

    const other = survivor.api('alpha');
    const cancelled = await other.request('POST', `/v1/jobs/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');

    // The survivor picks the run up when the dead replica's lock expires and settles what it left open.
    const calls: Json[] = await vi.waitFor(
      async () => {
        const { toolCalls } = await other.job(id);
        expect(toolCalls.map((call: Json) => call.outcome !== null)).toEqual([true, true]);
        return toolCalls;
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(
      survivor.process.logs.some((log) => log.msg === 'settled the calls a cancelled job left open'),
      'the survivor settled the open calls',
    ).toBe(true);
    const byId = Object.fromEntries(calls.map((call) => [call.id, call]));
    const starts = (text: string) =>
      readLedger(deployment.path('notes.jsonl')).filter((row) => row.phase === 'start' && row.text === text)
        .length;

    const ranCall = byId[ran];
    expect(starts(ranCall.arguments.text)).toBe(1);
    expect([
      ['cancelled', 'unknown'],
      ['ok', 'yes'],
    ]).toContainEqual([ranCall.outcome.status, ranCall.outcome.executed]);

    // Every worker heard of both cancels before either was settled: the queued write is refused unsent.
    const queuedCall = byId[waited];
    expect(queuedCall.outcome).toMatchObject({ status: 'cancelled', executed: 'no' });
    expect(starts(queuedCall.arguments.text)).toBe(0);
    // Removed from the queue, or taken by the worker and refused there: either way no longer waiting.
    expect(['unknown', 'completed']).toContain(await queue.getJobState(toolCallJobId(id, waited)));
    expect((await other.job(id)).status).toBe('cancelled');
  });
});
