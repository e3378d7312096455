import type { Job } from '@switchyard/client';
import { describe, expect, it } from 'vitest';
import { jobHeadline } from '../src/jobs/show.ts';

const JOB_ID = 'job_00000000-0000-4000-8000-000000000001';

/** A batch as `GET /v1/jobs/:id` answers it, reduced to what the headline reads. */
const batch = (status: Job['status'], summary: NonNullable<Job['summary']>): Job =>
  ({ id: JOB_ID, kind: 'batch', status, summary }) as Job;

describe('the job headline of jobs get and watch', () => {
  it('counts one call in the singular, and a job whose calls are all open by its pending calls alone', () => {
    expect(jobHeadline(batch('running', { calls: 1, pending: 1, byStatus: {} }))).toBe(
      `${JOB_ID} batch running — 1 call (pending 1)`,
    );
  });

  it('lists the settled calls by outcome, then the open ones', () => {
    expect(jobHeadline(batch('running', { calls: 5, pending: 2, byStatus: { ok: 2, tool_error: 1 } }))).toBe(
      `${JOB_ID} batch running — 5 calls (ok 2, tool_error 1, pending 2)`,
    );
    expect(jobHeadline(batch('succeeded', { calls: 2, pending: 0, byStatus: { ok: 2 } }))).toBe(
      `${JOB_ID} batch succeeded — 2 calls (ok 2)`,
    );
  });

  it('shows an agent job, which has no summary, by its status alone', () => {
    expect(jobHeadline({ id: JOB_ID, kind: 'agent', status: 'running' } as Job)).toBe(
      `${JOB_ID} agent running`,
    );
  });
});
