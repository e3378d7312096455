import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * A job's deadline ends its run on time even when a call is still running (issue 8, a run that never
 * reaches a final status): the batch no longer waits for every call before it looks at the clock.
 */
describe('a batch past its deadline', () => {
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = new Deployment('deadline', () => ({
      slow: exampleServer('slow', { trusted: true, timeoutMs: 120_000 }),
    }));
    await deployment.startWorker();
    await deployment.startOrchestrator();
  }, 180_000);

  afterAll(async () => {
    await deployment?.close();
  });

  it('fails at its deadline while a call is still running', { timeout: 120_000 }, async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'slow__sleep', arguments: { ms: 60_000 } }],
      limits: { deadlineMs: 2_000 },
    });
    expect(submitted.status).toBe(201);
    const job: Json = await api.finished(submitted.body.id, 45_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/deadline \(2000 ms\)/);
    // Ended by the deadline, not by the call: the call (60 s) is still running.
    expect(new Date(job.finishedAt).getTime() - new Date(job.startedAt).getTime()).toBeLessThan(30_000);
    // The running call was cancelled by the deadline, and its outcome says so (not "a timeout", not a
    // bare "cancelled"): the limit that fired is named.
    await vi.waitFor(
      async () => {
        const [call] = (await api.job(submitted.body.id)).toolCalls;
        expect(call.outcome).toMatchObject({ status: 'cancelled', executed: 'unknown' });
        expect(call.outcome.error).toBe("the job's deadlineMs of 2000 ms passed");
        expect(call.outcome.text).toContain(
          "was cancelled while it ran (the job's deadlineMs of 2000 ms passed);",
        );
      },
      { timeout: 30_000, interval: 250 },
    );
  });
});
