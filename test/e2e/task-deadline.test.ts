import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

/**
 * Issue 10: a job's deadline reaches a running MCP task as `tasks/cancel`. The orchestrator turns the
 * deadline into a cancel of the job's calls; the worker running the task sends `tasks/cancel`, and the
 * example `reports` server records in its own ledger that the cancel stopped the task.
 */
describe('a batch past its deadline while its call runs as a task', () => {
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = new Deployment('task-deadline', (dir) => ({
      reports: exampleServer('reports', { env: { REPORTS_LEDGER: `${dir}/reports.jsonl` } }),
    }));
    await deployment.startWorker();
    await deployment.startOrchestrator();
  }, 180_000);

  afterAll(async () => {
    await deployment?.close();
  });

  it('cancels the task with tasks/cancel at the deadline', { timeout: 120_000 }, async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'reports__compile-report', arguments: { topic: 'overdue', ms: 120_000 } }],
      // Long enough for a loaded machine to start the task, far shorter than the task.
      limits: { deadlineMs: 8_000 },
    });
    expect(submitted.status).toBe(201);
    const job: Json = await api.finished(submitted.body.id, 60_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/deadline \(8000 ms\)/);
    const rows = await waitForLedger(deployment.path('reports.jsonl'), (all) =>
      all.some((row) => row.phase === 'cancelled'),
    );
    const created = rows.filter((row) => row.phase === 'created');
    expect(created).toHaveLength(1);
    expect(rows.filter((row) => row.phase === 'cancelled').map((row) => row.taskId)).toEqual([
      created[0]?.taskId,
    ]);
    expect(rows.filter((row) => row.phase === 'done')).toHaveLength(0);
  });
});
