import {
  RELAY_PROGRESS_LABEL,
  type RedisConnection,
  redisKeys,
  type ToolCallJob,
  type ToolCallProgress,
  toolQueueName,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';

/** What an MCP server reported in one notifications/progress. */
export interface ServerProgress {
  progress: number;
  total?: number;
  message?: string;
}

export type ProgressRelay = (bullId: string, call: ToolCallJob, progress: ServerProgress) => void;

/**
 * Publishes a call's MCP progress on the deployment's progress channel when its producer asked for it
 * (the /mcp gateway forwards it to its client). Fire and forget: progress is advisory, and a lost
 * notification must never fail or delay the call it describes.
 */
export function progressRelay(redis: RedisConnection, prefix: string, log: Logger): ProgressRelay {
  const channel = redisKeys.progress(prefix);
  return (bullId, call, progress) => {
    if (call.labels[RELAY_PROGRESS_LABEL] !== 'true') return;
    const message: ToolCallProgress = {
      queue: toolQueueName(call.server),
      id: bullId,
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message.slice(0, 2_000) } : {}),
    };
    redis
      .publish(channel, JSON.stringify(message))
      .catch((error: unknown) =>
        log.debug({ err: error, bull_job_id: bullId }, 'could not relay tool call progress'),
      );
  };
}
