import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

/**
 * Issue 8 items 2 and 9: cancelling a job stops a call that is already running (the worker aborts the
 * MCP request, so notifications/cancelled reaches the server) and reports it truthfully; only a call
 * BullMQ removed before any worker took it is `cancelled` with executed `no`.
 */
describe('cancelling a job', () => {
  let fleet: Fleet;
  let dispatcher: ToolCallDispatcher;

  beforeAll(async () => {
    fleet = new Fleet('cancel', (dir) => ({
      slow: exampleServer('slow', {
        env: { SLOW_LEDGER: `${dir}/slow.jsonl` },
        timeoutMs: 60_000,
        retry: { attempts: 1 },
      }),
    }));
    await fleet.startWorker({ servers: ['slow'] });
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('cancels the running call on its worker and removes the queued one', async () => {
    const call = (toolCallId: string, ms: number) =>
      dispatcher.dispatch({
        jobId: 'cancel-me',
        toolCallId,
        server: 'slow',
        tool: 'sleep',
        arguments: { ms },
      });
    const running = call('running', 20_000);
    await waitForLedger(fleet.path('slow.jsonl'), (rows) => rows.some((row) => row.phase === 'start'));
    // concurrency 1: this one waits in the queue behind the running call.
    const queued = call('queued', 5);
    // dispatch() resolves only with the outcome: the queue itself says when the call is in it.
    // (prioritized: fair share gives every call of a `fairness: teams` server a priority)
    const waiting = async () => {
      const counts = await dispatcher.queueCounts('slow');
      return (counts.waiting ?? 0) + (counts.prioritized ?? 0);
    };
    while ((await waiting()) !== 1) await new Promise((r) => setTimeout(r, 20));

    expect(await dispatcher.cancel('cancel-me')).toBe(1);

    expect(await queued).toMatchObject({ status: 'cancelled', executed: 'no', attempts: 0 });
    const outcome = await running;
    expect(outcome).toMatchObject({ status: 'cancelled', executed: 'unknown', attempts: 1 });
    expect(outcome.workerId).toBeTruthy();
    // The server saw notifications/cancelled for the running call; the queued one never started.
    const rows = await waitForLedger(fleet.path('slow.jsonl'), (all) =>
      all.some((row) => row.phase === 'cancelled'),
    );
    expect(rows.filter((row) => row.phase === 'start')).toHaveLength(1);
    expect(rows.filter((row) => row.phase === 'done')).toHaveLength(0);
    expect(
      readLedger(fleet.path('slow.jsonl')).find((row) => row.phase === 'cancelled')?.reason,
    ).toBeTruthy();
  });

  it('leaves calls of other jobs alone', async () => {
    const other = dispatcher.dispatch({
      jobId: 'not-me',
      toolCallId: 'kept',
      server: 'slow',
      tool: 'sleep',
      arguments: { ms: 300 },
    });
    expect(await dispatcher.cancel('nobody')).toBe(0);
    expect(await other).toMatchObject({ status: 'ok', executed: 'yes' });
  });
});
