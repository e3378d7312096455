/** A job's own limit (steps, tool calls, deadline) was reached: the job fails with this reason. */
export class RunLimitError extends Error {
  override name = 'RunLimitError';
}
