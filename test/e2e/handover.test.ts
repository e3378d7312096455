import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, submitAndFindRunner } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

const CALLS = 400;

/** Every note call of a job against the notes server's own ledger: ran at most once, and said so. */
function expectTruthfulNotes(job: Json, ledgerPath: string): void {
  const starts = new Map<string, number>();
  for (const row of readLedger(ledgerPath)) {
    if (row.phase === 'start') starts.set(String(row.text), (starts.get(String(row.text)) ?? 0) + 1);
  }
  for (const call of job.toolCalls) {
    const ran = starts.get(call.arguments.text) ?? 0;
    expect(call.outcome, `call ${call.id} has an outcome`).not.toBeNull();
    expect(ran, `note ${call.arguments.text} ran at most once`).toBeLessThanOrEqual(1);
    if (call.outcome.executed === 'yes') expect(ran, `note ${call.arguments.text} reported executed`).toBe(1);
    if (call.outcome.executed === 'no') expect(ran, `note ${call.arguments.text} reported not run`).toBe(0);
  }
}

/**
 * A hand-over is not a cancel (issue 8 item 2): the replica running a job is frozen (SIGSTOP) past
 * its lock, another replica takes the run over, and the frozen one wakes up (SIGCONT). Nobody
 * cancelled the job, so no call may end `cancelled`, every `executed` must match the ledger, and the
 * job must succeed.
 */
describe('a run handed over by a frozen replica', () => {
  let deployment: Deployment;
  let replicas: Orchestrator[];

  beforeAll(async () => {
    deployment = new Deployment('handover', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, concurrency: 2 }),
    }));
    await deployment.startWorker({ id: 'w-handover' });
    replicas = await Promise.all([
      deployment.startOrchestrator('o-one'),
      deployment.startOrchestrator('o-two'),
    ]);
    // Starting three processes on a loaded machine can take a while.
  }, 180_000);

  afterAll(async () => {
    // A replica left stopped by a failed assertion must run again to hear SIGTERM.
    for (const replica of replicas ?? []) continueProcess(replica.process.pid);
    await deployment?.close();
  });

  /** Freezes the replica running `jobId` until the other one has taken the run, then wakes it. */
  async function freezeUntilHandedOver(jobId: string, doomed: Orchestrator, survivor: Orchestrator) {
    process.kill(doomed.process.pid, 'SIGSTOP');
    try {
      await survivor
        .api('alpha')
        .events(
          jobId,
          (event) =>
            event.event === 'status' &&
            event.data.status === 'running' &&
            event.data.replica === survivor.process.name.replace('orchestrator ', ''),
          60_000,
        );
    } finally {
      continueProcess(doomed.process.pid);
    }
  }

  it('records no cancelled call and tells the truth about every write', { timeout: 240_000 }, async () => {
    const calls = Array.from({ length: CALLS }, (_, index) => ({
      tool: 'notes__add_note',
      arguments: { text: `h-${index}`, delayMs: 20 },
    }));
    const { id, doomed, survivor } = await submitAndFindRunner(replicas, { kind: 'batch', calls });
    // Mid-run: some writes done, most still to come.
    await waitForLedger(
      deployment.path('notes.jsonl'),
      (rows) => rows.filter((row) => row.phase === 'done').length >= 20,
      60_000,
    );
    await freezeUntilHandedOver(id, doomed, survivor);

    const job: Json = await survivor.api('alpha').finished(id, 180_000);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls).toHaveLength(CALLS);
    const cancelled = job.toolCalls.filter((call: Json) => call.outcome?.status === 'cancelled');
    expect(cancelled.map((call: Json) => call.id)).toEqual([]);
    expect(job.toolCalls.every((call: Json) => call.outcome?.status === 'ok')).toBe(true);
    expectTruthfulNotes(job, deployment.path('notes.jsonl'));
    // The woken replica found out and stopped, leaving the run to the survivor.
    await doomed.process.waitFor(
      (log) => log.msg === 'run handed over after a lost lock; stopped here' && log.job_id === id,
      'the frozen replica to give the run up',
    );
  });

  it('resumes an agent mid-turn on the survivor and answers every call once', {
    timeout: 180_000,
  }, async () => {
    const { id, doomed, survivor } = await submitAndFindRunner(replicas, {
      kind: 'agent',
      input: 'Write three notes.',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { id: 'w1', tool: 'notes__add_note', arguments: { text: 'agent-1', delayMs: 3_000 } },
              { id: 'w2', tool: 'notes__add_note', arguments: { text: 'agent-2', delayMs: 3_000 } },
            ],
          },
          { toolCalls: [{ id: 'w3', tool: 'notes__add_note', arguments: { text: 'agent-3' } }] },
          { final: 'Three notes written.' },
        ],
      },
    });
    // Both writes of the first turn are being held open by the server: the tools node is mid-flight.
    await waitForLedger(
      deployment.path('notes.jsonl'),
      (rows) => ['agent-1', 'agent-2'].every((text) => rows.some((row) => row.text === text)),
      60_000,
    );
    await freezeUntilHandedOver(id, doomed, survivor);

    const job: Json = await survivor.api('alpha').finished(id, 120_000);
    expect(job).toMatchObject({ status: 'succeeded', result: 'Three notes written.' });
    expect(
      job.toolCalls.map((call: Json) => [call.id, call.outcome?.status, call.outcome?.executed]),
    ).toEqual([
      ['w1', 'ok', 'yes'],
      ['w2', 'ok', 'yes'],
      ['w3', 'ok', 'yes'],
    ]);
    expectTruthfulNotes(job, deployment.path('notes.jsonl'));
    // The conversation the checkpoints hold: each call answered once, in order, then the answer.
    expect(
      job.messages.map((message: Json) => [
        message.role,
        message.toolCallId ?? message.toolCalls?.length ?? null,
      ]),
    ).toEqual([
      ['user', null],
      ['assistant', 2],
      ['tool', 'w1'],
      ['tool', 'w2'],
      ['assistant', 1],
      ['tool', 'w3'],
      ['assistant', null],
    ]);
  });
});

function continueProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // already gone
  }
}
