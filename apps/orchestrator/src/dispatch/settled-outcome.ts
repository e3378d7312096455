import {
  type OutcomeStatus,
  type ToolCallJob,
  type ToolCallOutcome,
  ToolCallOutcomeSchema,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { localOutcome } from './local-outcome.ts';

/**
 * The outcome recorded on a finished job, or the failure BullMQ recorded when our processor could not
 * (also read by the gateway's orphan sweep). Undefined while the job has not finished.
 */
export function settledOutcome(job: Job, data: ToolCallJob): ToolCallOutcome | undefined {
  if (job.finishedOn === undefined) return undefined;
  const recorded = ToolCallOutcomeSchema.safeParse(job.returnvalue);
  if (recorded.success) return recorded.data;
  if (!job.failedReason) {
    // Finished for good with a value we cannot read: waiting longer would never settle it.
    const problem = recorded.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    return localOutcome(
      data,
      'failed',
      `The call finished but its recorded outcome is unreadable (${problem}); whether it ran is unknown.`,
      'unreadable_outcome',
      'unknown',
    );
  }
  // BullMQ failed the job itself (e.g. stalled too often): a non-idempotent call may have run.
  const status: OutcomeStatus = data.idempotent ? 'failed' : 'indeterminate';
  return localOutcome(
    data,
    status,
    `The call failed in the queue: ${job.failedReason}`,
    job.failedReason,
    'unknown',
  );
}
