import { z } from 'zod';

const DAY_SECONDS = 24 * 3600;

/**
 * Nothing may keep a finished tool-call job for less than this: the gateway's orphan sweep reads a settled
 * `/mcp` call from its queue job 30 s after it settled (sweeping every 10 s), and a dispatcher whose
 * outcome notice was lost reads the job on its next reconcile round (docs/semantics.md §2).
 */
export const MIN_TOOL_CALL_RETENTION_SECONDS = 60;

/**
 * How long a finished tool-call job (`tools.{<server>}`) stays in Redis. While it is there, a resumed or
 * re-run agent or batch job that dispatches the call again under its deterministic id attaches to it
 * instead of running it again; so it must outlive the longest run that may still look it up
 * (`orchestrator.maxDeadlineMs`, checked in config.ts). Both the dispatcher (job options) and the worker
 * (its Worker options, for jobs added without them) read these.
 */
export const ToolCallRetentionSchema = z
  .strictObject({
    /** A call that completed (every outcome a worker records, `tool_error` and `indeterminate` included). */
    keepCompletedSeconds: z
      .int()
      .min(MIN_TOOL_CALL_RETENTION_SECONDS)
      .max(30 * DAY_SECONDS)
      .default(DAY_SECONDS),
    /** A call BullMQ itself failed for good (stalled too often): rarer, and read by an operator. */
    keepFailedSeconds: z
      .int()
      .min(MIN_TOOL_CALL_RETENTION_SECONDS)
      .max(30 * DAY_SECONDS)
      .default(7 * DAY_SECONDS),
  })
  .default({ keepCompletedSeconds: DAY_SECONDS, keepFailedSeconds: 7 * DAY_SECONDS });

export type ToolCallRetention = z.output<typeof ToolCallRetentionSchema>;

/**
 * The issues of a retention shorter than the longest run deadline: a run resumed near its deadline would
 * find the call's job gone, add it again, and run a non-idempotent call twice.
 */
export function retentionIssues(
  retention: ToolCallRetention,
  maxDeadlineMs: number,
): Array<{ path: string[]; message: string }> {
  const keys = ['keepCompletedSeconds', 'keepFailedSeconds'] as const;
  return keys
    .filter((key) => retention[key] * 1000 < maxDeadlineMs)
    .map((key) => ({
      path: ['toolCalls', key],
      message: `must be at least orchestrator.maxDeadlineMs (${maxDeadlineMs} ms = ${Math.ceil(maxDeadlineMs / 1000)} s): a run resumed before its deadline looks its finished calls up in Redis, and a call whose job was removed would run again`,
    }));
}

/**
 * BullMQ's removeOnComplete / removeOnFail for tool-call jobs. Age only: a count cap would remove jobs
 * younger than a run's deadline on a busy queue. BullMQ prunes when a later job of the same queue
 * finishes, with that job's options (or, without them, the finishing Worker's).
 */
export function toolCallJobRetention(retention: ToolCallRetention): {
  removeOnComplete: { age: number };
  removeOnFail: { age: number };
} {
  return {
    removeOnComplete: { age: retention.keepCompletedSeconds },
    removeOnFail: { age: retention.keepFailedSeconds },
  };
}
