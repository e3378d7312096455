/**
 * A job whose run could not be queued (the queue store did not answer the add) is still accepted: it is
 * recorded in PostgreSQL, stays `queued`, and the reconciler queues its run from there
 * (reconcile/run-reconciler.ts, docs/semantics.md §18). It used to be failed "could not be queued" with a
 * 503, which lost the job on a blip and, on the client's retry, made a second one (the fault suite on the
 * postgres backend, where a PostgreSQL restart hits the queue add between the two statements).
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Team } from '../src/auth/teams.service.ts';
import type { AgentRunQueue } from '../src/jobs/agent-run-queue.ts';
import type { JobEvents } from '../src/jobs/job-events.ts';
import { JobStore } from '../src/jobs/job-store.ts';
import { JobsService } from '../src/jobs/jobs.service.ts';
import { deploymentModelAccess } from '../src/models/index.ts';
import type { Logger } from '../src/runtime/logger.ts';
import { dropJobSchema, openJobSchema } from './fixtures/job-schema.ts';

describe('submitting while the queue store does not answer', () => {
  let pool: pg.Pool;
  let schema: string;
  let store: JobStore;

  beforeAll(async () => {
    ({ pool, schema } = await openJobSchema('unqueued'));
    store = new JobStore(pool);
  });

  afterAll(async () => {
    await dropJobSchema(pool, schema);
  });

  it('keeps the job queued for the reconciler instead of failing it', async () => {
    const warnings: string[] = [];
    const log = {
      warn: (_: unknown, msg: string) => warnings.push(msg),
      info: () => undefined,
    } as unknown as Logger;
    const published: Array<{ type: string; data: unknown }> = [];
    const events = {
      publish: async (_jobId: string, type: string, data: unknown) => {
        published.push({ type, data });
      },
    } as unknown as JobEvents;
    let adds = 0;
    const runs = {
      enqueue: async () => {
        adds += 1;
        throw new Error('Connection terminated unexpectedly');
      },
    } as unknown as AgentRunQueue;
    const service = new JobsService(
      store,
      events,
      runs,
      { read: async () => [] } as never,
      {} as never,
      {} as never,
      { jobSubmitted: () => undefined } as never,
      {} as never,
      log,
      { forJob: async () => [] } as never,
      { forTeam: () => deploymentModelAccess({}) } as never,
    );
    const team = { name: 'alpha', config: { maxConcurrentJobs: 10, tools: ['*'] } } as unknown as Team;

    const { view, created } = await service.submit(team, {
      kind: 'agent',
      input: 'hello',
      model: { provider: 'scripted', script: [{ text: 'done' }] },
    } as never);

    expect(created).toBe(true);
    expect(adds).toBe(1);
    expect(view.status).toBe('queued');
    const stored = await store.get(view.id);
    expect(stored?.status).toBe('queued');
    expect(stored?.error).toBeNull();
    expect(published.map((event) => event.data)).toEqual([{ status: 'queued' }]);
    expect(warnings).toEqual([
      'run not queued yet: the queue store did not answer; the reconciler queues it from PostgreSQL',
    ]);
  });
});
