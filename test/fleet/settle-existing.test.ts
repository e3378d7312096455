import { toolCallJobId } from '@switchyard/contracts';
import type { ToolCallDispatcher, ToolCallRequest } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

const JOB = 'resumed';
const REASON = "the job's deadlineMs of 1000 ms passed";

/**
 * settleExisting (docs/semantics.md §6): a replica resuming a cancelled or past-deadline run settles a
 * call an earlier replica queued from its queue job — the recorded outcome, a removal, or a cancel on the
 * worker — and never adds the job itself. follow (§18): a replica resuming a live run waits for such a
 * call's job, and never adds it either. `first` plays the earlier replica, `resumer` the one resuming.
 */
describe('settling an already-dispatched call without starting it', () => {
  let fleet: Fleet;
  let first: ToolCallDispatcher;
  let resumer: ToolCallDispatcher;
  const request = (toolCallId: string, ms = 5): ToolCallRequest => ({
    jobId: JOB,
    toolCallId,
    server: 'slow',
    tool: 'sleep',
    arguments: { ms },
  });

  beforeAll(async () => {
    fleet = new Fleet('settle-existing', (dir) => ({
      slow: exampleServer('slow', {
        env: { SLOW_LEDGER: `${dir}/slow.jsonl` },
        timeoutMs: 60_000,
        retry: { attempts: 1 },
      }),
    }));
    await fleet.startWorker({ servers: ['slow'] });
    first = await fleet.dispatcher();
    resumer = await fleet.otherDispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('answers undefined for a call never queued, and does not queue it', async () => {
    expect(await resumer.settleExisting(request('never'), REASON)).toBeUndefined();
    expect(await resumer.queue('slow').getJob(toolCallJobId(JOB, 'never'))).toBeUndefined();
  });

  it('answers a finished call with the outcome recorded on its job', async () => {
    const outcome = await first.dispatch(request('finished'));
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(await resumer.settleExisting(request('finished'), REASON)).toEqual(outcome);
  });

  it('removes a queued call and cancels a running one on its worker', async () => {
    void first.dispatch(request('running', 20_000));
    await waitForLedger(fleet.path('slow.jsonl'), (rows) =>
      rows.some((row) => row.phase === 'start' && row.ms === 20_000),
    );
    // concurrency 1: this one waits in the queue behind the running call.
    void first.dispatch(request('queued'));
    const queued = toolCallJobId(JOB, 'queued');
    await vi.waitFor(
      async () => expect(['waiting', 'prioritized']).toContain(await first.queue('slow').getJobState(queued)),
      { timeout: 30_000, interval: 20 },
    );

    const [removed, stopped] = await Promise.all([
      resumer.settleExisting(request('queued'), REASON),
      resumer.settleExisting(request('running'), REASON),
    ]);
    // Removed, or — when the worker freed by the other cancel took it first — refused by that worker,
    // which heard its cancel before: not run either way.
    expect(removed).toMatchObject({ status: 'cancelled', executed: 'no', attempts: 0 });
    expect(stopped).toMatchObject({ status: 'cancelled', executed: 'unknown', attempts: 1 });
    // The server heard the cancel of the running call; the queued one never started.
    const rows = await waitForLedger(fleet.path('slow.jsonl'), (all) =>
      all.some((row) => row.phase === 'cancelled'),
    );
    expect(rows.filter((row) => row.phase === 'start' && row.ms === 5)).toHaveLength(1); // 'finished'
    expect(rows.filter((row) => row.phase === 'start' && row.ms === 20_000)).toHaveLength(1);
    expect(rows.find((row) => row.phase === 'cancelled')?.reason).toContain(REASON);
  });

  it('follows a call an earlier replica queued to its outcome, and never queues one whose job is gone', async () => {
    // Gone (Redis lost it, or it never was): nothing to follow, and nothing added — an add here is what
    // ran a non-idempotent call twice when Redis lost its data between a resumed run's look and its add.
    expect(await resumer.follow(request('gone'))).toBeUndefined();
    expect(await resumer.queue('slow').getJob(toolCallJobId(JOB, 'gone'))).toBeUndefined();

    const original = first.dispatch(request('followed', 1_000));
    await waitForLedger(fleet.path('slow.jsonl'), (rows) =>
      rows.some((row) => row.phase === 'start' && row.ms === 1_000),
    );
    const followed = await resumer.follow(request('followed', 1_000));
    const outcome = await original;
    expect(followed).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(followed?.finishedAt).toBe(outcome.finishedAt);
    expect(followed?.workerId).toBe(outcome.workerId);
    const rows = await waitForLedger(fleet.path('slow.jsonl'), (all) =>
      all.some((row) => row.phase === 'done' && row.ms === 1_000),
    );
    expect(rows.filter((row) => row.phase === 'start' && row.ms === 1_000)).toHaveLength(1);
  });
});
