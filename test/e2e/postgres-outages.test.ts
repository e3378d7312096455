import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { DATABASE_URL, Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { DedicatedPostgres } from '../support/postgres-server.ts';

/** Short enough to keep the suite fast; the 503s below must come within it (plus a busy machine's slack). */
const SETTINGS = { dependencyTimeoutMs: 1_000, retryAfterSeconds: 3 };
const ANSWER_WITHIN_MS = 6_000;
/** Waits of 2 s each: an outage of about 20 s. */
const OUTAGE_WAITS = 10;

const recorder = (dir: string) => ({
  recorder: exampleServer('recorder', {
    env: { RECORDER_LEDGER: `${dir}/rec.jsonl` },
    idempotent: ['record'],
  }),
});

const serialBatch = (calls: number) => ({
  kind: 'batch',
  calls: Array.from({ length: calls }, (_, index) => ({
    tool: 'recorder__record',
    arguments: { ms: 300, label: `call-${index}` },
  })),
});

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await work();
  return { result, ms: Date.now() - started };
}

function expectAllOk(job: Json, calls: number): void {
  expect(job.status).toBe('succeeded');
  expect(job.toolCalls).toHaveLength(calls);
  for (const call of job.toolCalls)
    expect(call.outcome, call.id).toMatchObject({ status: 'ok', executed: 'yes' });
}

describe('PostgreSQL outages', () => {
  describe('every connection of the orchestrator terminated mid-run (pg_terminate_backend)', () => {
    let deployment: Deployment;
    let orchestrator: Orchestrator;

    beforeAll(async () => {
      deployment = new Deployment('pg-terminate', recorder, { orchestrator: SETTINGS });
      await deployment.startWorker();
      orchestrator = await deployment.startOrchestrator('o-pg-terminate');
    });

    afterAll(async () => {
      await deployment?.close();
    });

    it('keeps the orchestrator running, and the run finishes by itself', async () => {
      const api = orchestrator.api('alpha');
      const submitted = await api.submit(serialBatch(8));
      expect(submitted.status).toBe(201);
      const id = submitted.body.id;
      await api.events(id, (event) => event.event === 'tool_call.finished');

      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      let terminated: number;
      try {
        const result = await admin.query(
          'SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1',
          [`switchyard-orchestrator/${deployment.schema}`],
        );
        terminated = result.rows.filter((row) => row.done).length;
      } finally {
        await admin.end();
      }
      expect(terminated).toBeGreaterThan(0);

      const job = await api.finishedDespiteOutages(id);
      expectAllOk(job, 8);
      expect(orchestrator.process.child.exitCode).toBeNull();
      expect((await api.request('GET', '/health/ready')).status).toBe(200);
    });
  });

  describe('a restart of PostgreSQL', () => {
    const postgres = new DedicatedPostgres();
    let deployment: Deployment;
    let orchestrator: Orchestrator;

    beforeAll(async () => {
      await postgres.start();
      deployment = new Deployment('pg-restart', recorder, { orchestrator: SETTINGS });
      deployment.processEnv.DATABASE_URL = postgres.url;
      await deployment.startWorker();
      orchestrator = await deployment.startOrchestrator('o-pg-restart');
    });

    afterAll(async () => {
      await deployment?.close();
      await postgres.stop();
    });

    it('answers 503 with Retry-After while it is down, and resumes the run when it is back', async () => {
      const api = orchestrator.api('alpha');
      const submitted = await api.submit(serialBatch(10));
      expect(submitted.status).toBe(201);
      const id = submitted.body.id;
      await api.events(id, (event) => event.event === 'tool_call.finished');

      await postgres.stopServer();
      const ready = await timed(() => api.request('GET', '/health/ready'));
      expect(ready.result.status).toBe(503);
      expect(ready.result.body.missing).toEqual(['postgres']);
      expect(ready.result.headers.get('retry-after')).toBe('3');
      expect(ready.ms).toBeLessThan(ANSWER_WITHIN_MS);
      for (const [method, path, body] of [
        ['GET', `/v1/jobs/${id}`, undefined],
        ['POST', '/v1/jobs', serialBatch(1)],
      ] as const) {
        const answer = await timed(() => api.request(method, path, body));
        expect(answer.result.status, `${method} ${path}: ${JSON.stringify(answer.result.body)}`).toBe(503);
        expect(answer.result.headers.get('retry-after'), `${method} ${path}`).toBe('3');
        expect(answer.result.body.detail).toMatch(/postgres/i);
        expect(answer.ms, `${method} ${path}`).toBeLessThan(ANSWER_WITHIN_MS);
      }
      // The run waits for PostgreSQL instead of failing: kept down past the 5 attempts' backoff
      // (1 + 2 + 4 + 8 s) that used to give the run up, counted in the run's own retries.
      let waits = 0;
      await orchestrator.process.waitFor(
        (log) =>
          log.job_id === id &&
          typeof log.msg === 'string' &&
          log.msg.includes('dependency outage') &&
          ++waits >= OUTAGE_WAITS,
        `the run to wait out the outage ${OUTAGE_WAITS} times`,
        60_000,
      );
      expect(orchestrator.process.child.exitCode).toBeNull();

      await postgres.start();
      const job = await api.finishedDespiteOutages(id);
      expectAllOk(job, 10);
      expect(orchestrator.process.child.exitCode).toBeNull();
      expect((await api.request('GET', '/health/ready')).status).toBe(200);
    });
  });
});
