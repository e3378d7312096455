import { describe, expect, it } from 'vitest';
import { ProblemException } from '../src/http/problem.ts';
import { refuseLongDeadline } from '../src/jobs/deadline-cap.ts';
import type { JobRequest } from '../src/jobs/job-request.ts';

const batch = (deadlineMs?: number): JobRequest => ({
  kind: 'batch',
  calls: [{ tool: 'search__find', arguments: {} }],
  ...(deadlineMs === undefined ? {} : { limits: { deadlineMs } }),
});

describe('refuseLongDeadline', () => {
  it('accepts a job without a deadline of its own, or one within orchestrator.maxDeadlineMs', () => {
    expect(() => refuseLongDeadline(batch(), 60_000)).not.toThrow();
    expect(() => refuseLongDeadline(batch(60_000), 60_000)).not.toThrow();
  });

  it('refuses a longer one with a 400 naming limits.deadlineMs and the setting', () => {
    let thrown: unknown;
    try {
      refuseLongDeadline(batch(60_001), 60_000);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemException);
    const problem = thrown as ProblemException;
    expect(problem.kind).toBe('validation-failed');
    expect(problem.getStatus()).toBe(400);
    expect(problem.detail).toBe(
      'limits.deadlineMs: must be at most 60000 (orchestrator.maxDeadlineMs of this deployment)',
    );
    expect(problem.extensions).toEqual({
      errors: [
        {
          path: 'limits.deadlineMs',
          message: 'must be at most 60000 (orchestrator.maxDeadlineMs of this deployment)',
        },
      ],
    });
  });
});
