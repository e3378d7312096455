import type { EffectiveTimeout, ServerConfig, ToolCallJob } from '@switchyard/contracts';
import type { Job } from 'bullmq';
import type { CallTimeouts } from './call-timeouts.ts';

/**
 * The timing policy of one attempt, resolved once (docs/semantics.md §6): everything the send, the
 * retry decision and the outcome read about limits comes from here, not from the config again.
 */
export interface CallPolicy {
  /** The per-attempt timeout (static or adaptive); progress restarts it. */
  timeout: EffectiveTimeout;
  /** The total limit of an attempt that progress cannot extend (servers.<name>.maxTimeoutMs). */
  maxTotalTimeoutMs: number;
  /** The call's deadline (epoch ms): past it a call that never started is not run. */
  deadline: number;
  /** How many attempts the job has in all (BullMQ's opts.attempts). */
  maxAttempts: number;
}

export async function resolveCallPolicy(
  call: ToolCallJob,
  job: Job,
  config: ServerConfig,
  timeouts: CallTimeouts,
): Promise<CallPolicy> {
  return {
    timeout: await timeouts.forAttempt(call.tool),
    maxTotalTimeoutMs: config.maxTimeoutMs,
    deadline: call.deadline,
    maxAttempts: job.opts.attempts ?? 1,
  };
}
