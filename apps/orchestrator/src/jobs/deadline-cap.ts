import { ProblemException } from '../http/problem.ts';
import type { JobRequest } from './job-request.ts';

/**
 * Refuses a job asking for a deadline past `orchestrator.maxDeadlineMs`: the deployment keeps finished
 * tool calls in Redis only that long (toolCalls), so a longer run could run a call again. A 400 rather
 * than a silent cut, so the client learns its run ends sooner than it asked (the runner caps it anyway).
 */
export function refuseLongDeadline(request: JobRequest, maxDeadlineMs: number): void {
  const asked = request.limits?.deadlineMs;
  if (asked === undefined || asked <= maxDeadlineMs) return;
  const message = `must be at most ${maxDeadlineMs} (orchestrator.maxDeadlineMs of this deployment)`;
  throw new ProblemException('validation-failed', `limits.deadlineMs: ${message}`, {
    errors: [{ path: 'limits.deadlineMs', message }],
  });
}
