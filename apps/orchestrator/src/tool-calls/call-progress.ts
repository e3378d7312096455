import {
  progressThrottle,
  STORED_PROGRESS_INTERVAL_MS,
  toolCallJobId,
  toolQueueName,
} from '@switchyard/contracts';
import type { ProgressListener } from '../dispatch/progress-listener.ts';
import type { JobEvents } from '../jobs/job-events.ts';
import type { JobStore } from '../jobs/job-store.ts';
import type { Logger } from '../runtime/logger.ts';

export interface ProgressTarget {
  jobId: string;
  /** The call's id in its job (the events' `toolCallId`); `roundId` its queue job's (a question's retry). */
  toolCallId: string;
  roundId: string;
  server: string;
  tool: string;
}

/**
 * Turns the MCP progress a running call's server sends into the job's `tool_call.progress` events,
 * throttled (contracts' progress-throttle.ts) and stored in place of the call's previous one (JobStore
 * .replaceCallProgress). Returns the stop, to await before the call's outcome is recorded: it stores
 * the held progress first, so the outcome is the last word. A call whose server sends none costs one
 * in-memory listener.
 */
export function followCallProgress(
  target: ProgressTarget,
  deps: { listener: ProgressListener; events: JobEvents; store: JobStore; log: Logger },
): () => Promise<void> {
  const { jobId, toolCallId, server, tool } = target;
  const throttle = progressThrottle<{ progress: number; total?: number; message?: string }>(
    async (progress) => {
      const data = { toolCallId, server, tool, ...progress };
      await deps.events
        .publishWith(jobId, 'tool_call.progress', data, (event) =>
          deps.store.replaceCallProgress(jobId, toolCallId, event),
        )
        .catch((error: unknown) =>
          // Progress is for watchers: one that cannot be stored must not fail the call.
          deps.log.debug({ err: error, tool_call_id: toolCallId }, 'could not store tool call progress'),
        );
    },
    STORED_PROGRESS_INTERVAL_MS,
  );
  const unsubscribe = deps.listener.on(
    toolQueueName(server),
    toolCallJobId(jobId, target.roundId),
    ({ progress, total, message }) =>
      throttle.push({
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      }),
  );
  return async () => {
    unsubscribe();
    await throttle.close();
  };
}
