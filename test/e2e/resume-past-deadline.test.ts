import { bullmqBinding, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, submitAndFindRunner } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

const DEADLINE_MS = 4_000;

/**
 * A run resumed after its job's deadline (docs/semantics.md §6): the replica running a batch is killed
 * while its first write runs and its second waits in the queue, and the run lock outlives the deadline,
 * so the replica that takes the run over finds the deadline passed. It must settle both calls from their
 * queue jobs: the running write is cancelled on its worker and reported as possibly run (or with its real
 * result), the queued one is removed — no call that ran may be recorded `executed: no`.
 */
describe('a run resumed after its deadline passed', () => {
  let deployment: Deployment;
  let replicas: Orchestrator[];
  let queue: Queue;

  beforeAll(async () => {
    deployment = new Deployment(
      'resume-deadline',
      (dir) => ({
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, timeoutMs: 120_000 }),
      }),
      // A lock longer than the deadline: the run changes hands only after the deadline has passed.
      { orchestrator: { lockDurationMs: 3 * DEADLINE_MS } },
    );
    // On either backend: the suite's Redis connection, or the queue schema on postgres.
    const binding = bullmqBinding(await deployment.suiteStore());
    queue = new Queue(toolQueueName('notes'), binding.options, binding.factory as never);
    await deployment.startWorker({ id: 'w-resume' });
    replicas = await Promise.all([
      deployment.startOrchestrator('o-one'),
      deployment.startOrchestrator('o-two'),
    ]);
  }, 180_000);

  afterAll(async () => {
    await queue?.close();
    await deployment?.close();
  });

  it('settles each call from its queue job, never claiming a call that ran did not', {
    timeout: 180_000,
  }, async () => {
    // Two long writes to a serialized server: whichever a worker takes first runs, the other waits.
    const { id, doomed, survivor } = await submitAndFindRunner(replicas, {
      kind: 'batch',
      calls: ['resume-a', 'resume-b'].map((text) => ({
        tool: 'notes__add_note',
        arguments: { text, delayMs: 40_000 },
      })),
      limits: { deadlineMs: DEADLINE_MS },
    });

    // One write has reached the server (concurrency 1), the other waits behind it in the queue.
    const rows = await waitForLedger(
      deployment.path('notes.jsonl'),
      (all) => all.some((row) => row.phase === 'start'),
      60_000,
    );
    const started = String(rows.find((row) => row.phase === 'start')?.text);
    const [ran, waited] = started === 'resume-a' ? ['call-1', 'call-2'] : ['call-2', 'call-1'];
    const queuedId = toolCallJobId(id, waited);
    await vi.waitFor(
      async () => expect(['waiting', 'prioritized']).toContain(await queue.getJobState(queuedId)),
      { timeout: 30_000, interval: 50 },
    );
    await doomed.process.crash();

    // The survivor takes the run over once the dead replica's lock has expired, after the deadline.
    const other = survivor.api('alpha');
    const job: Json = await other.finished(id, 120_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(new RegExp(`deadline \\(${DEADLINE_MS} ms\\)`));
    expect(
      survivor.process.logs.some((log) => log.msg === 'run started' && log.job_id === id),
      'the survivor resumed the run',
    ).toBe(true);

    // Outcomes of calls still settling when the run ended are recorded as they arrive.
    const calls: Json[] = await vi.waitFor(
      async () => {
        const { toolCalls } = await other.job(id);
        expect(toolCalls.map((call: Json) => call.outcome !== null)).toEqual([true, true]);
        return toolCalls;
      },
      { timeout: 30_000, interval: 250 },
    );
    const byId = Object.fromEntries(calls.map((call) => [call.id, call]));
    const starts = (call: Json) =>
      readLedger(deployment.path('notes.jsonl')).filter(
        (row) => row.phase === 'start' && row.text === call.arguments.text,
      ).length;

    // The running write: it ran, so it is reported as possibly run (cancelled on its worker) or with
    // its real result — never as not run.
    const ranCall = byId[ran];
    expect(starts(ranCall)).toBe(1);
    expect(ranCall.outcome.executed, JSON.stringify(ranCall.outcome)).not.toBe('no');
    expect([
      ['cancelled', 'unknown'],
      ['ok', 'yes'],
    ]).toContainEqual([ranCall.outcome.status, ranCall.outcome.executed]);
    expect(ranCall.outcome.attempts).toBe(1);

    // The queued write: every worker heard both cancels before either was settled, so it was removed
    // (or refused unsent by the worker the first cancel freed): it did not run, and never will.
    const queuedCall = byId[waited];
    expect(queuedCall.outcome).toMatchObject({ status: 'cancelled', executed: 'no' });
    expect(starts(queuedCall)).toBe(0);
    expect(
      survivor.process.logs.some((log) => log.msg === 'settled the calls a run past its deadline left open'),
    ).toBe(true);
  });
});
