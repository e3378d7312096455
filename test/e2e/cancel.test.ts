import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/** POST /v1/jobs/:id/cancel: the run stops, queued tool calls are removed and end `cancelled`, never run. */
describe('cancelling a job', () => {
  let deployment: Deployment;
  let api: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment('cancel', (dir) => ({
      slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, trusted: true }),
    }));
    await deployment.startWorker();
    api = (await deployment.startOrchestrator()).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('stops a running batch; its queued calls never run', async () => {
    const calls = Array.from({ length: 10 }, () => ({ tool: 'slow__sleep', arguments: { ms: 400 } }));
    const submitted = await api.submit({ kind: 'batch', calls });
    const id = submitted.body.id;
    // The first call has run: the others are waiting in the serialized server's queue.
    await api.events(id, (event) => event.event === 'tool_call.finished');
    const cancelled = await api.request('POST', `/v1/jobs/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');

    const statusEvent = (await api.events(id)).at(-1);
    expect(statusEvent?.data.status).toBe('cancelled');
    // Every call still gets its one outcome, after the cancel.
    const finishedBefore = (await api.events(id)).filter(
      (event) => event.event === 'tool_call.finished',
    ).length;
    await api.events(
      id,
      (() => {
        let seen = finishedBefore;
        return (event) => event.event === 'tool_call.finished' && ++seen === calls.length;
      })(),
      30_000,
      statusEvent?.id,
    );
    const job: Json = await api.job(id);
    expect(job.status).toBe('cancelled');
    const statuses = job.toolCalls.map((call: Json) => call.outcome?.status);
    expect(statuses.every((status: string) => status === 'ok' || status === 'cancelled')).toBe(true);
    const ok = statuses.filter((status: string) => status === 'ok').length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(3);
    // A call removed from the queue never ran; one running at the cancel was cancelled on its worker
    // (notifications/cancelled) and may have taken effect.
    const cancelledCalls = job.toolCalls.filter(
      (candidate: Json) => candidate.outcome.status === 'cancelled',
    );
    const stoppedRunning = cancelledCalls.filter((call: Json) => call.outcome.executed === 'unknown');
    expect(stoppedRunning.length).toBeLessThanOrEqual(1);
    for (const call of cancelledCalls.filter((candidate: Json) => !stoppedRunning.includes(candidate))) {
      expect(call.outcome).toMatchObject({ executed: 'no', attempts: 0 });
    }
    // The server's own ledger: exactly the calls reported `ok` or stopped while running started.
    const ledger = readLedger(deployment.path('slow.jsonl'));
    expect(ledger.filter((row) => row.phase === 'start')).toHaveLength(ok + stoppedRunning.length);
    expect(ledger.filter((row) => row.phase === 'cancelled')).toHaveLength(stoppedRunning.length);
  });

  it('ends a job cancelled when cancelled right after submission, and refuses a second cancel', async () => {
    // Whether the run has started yet is a race; either way the job must end `cancelled`, once.
    const submitted = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'slow__sleep', arguments: { ms: 1_000 } }],
    });
    const cancelled = await api.request('POST', `/v1/jobs/${submitted.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    const job: Json = await api.finished(submitted.body.id);
    expect(job.status).toBe('cancelled');
    expect((await api.request('POST', `/v1/jobs/${submitted.body.id}/cancel`)).status).toBe(409);
  });
});
