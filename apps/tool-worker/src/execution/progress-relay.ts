import {
  progressRelayChannel,
  type Store,
  type ToolCallJob,
  type ToolCallLog,
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
/** Publishes one of a call's log messages (call-logs.ts bounds and budgets them); never rejects. */
export type LogRelay = (bullId: string, call: ToolCallJob, log: ToolCallLog['log']) => Promise<void>;

/**
 * Publishes a call's MCP progress on the deployment's progress channel, for every call: the replica
 * waiting for it turns it into the job's `tool_call.progress` events (throttled there) and, for /mcp,
 * forwards it to the client. A call whose server sends no progress publishes nothing. Fire and forget:
 * progress is advisory, and a lost notification must never fail or delay the call it describes.
 */
export function progressRelay(store: Store, log: Logger): ProgressRelay {
  const channel = progressRelayChannel(store);
  return (bullId, call, progress) => {
    const message: ToolCallProgress = {
      queue: toolQueueName(call.server),
      id: bullId,
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message.slice(0, 2_000) } : {}),
    };
    channel
      .publish(message)
      .catch((error: unknown) =>
        log.debug({ err: error, bull_job_id: bullId }, 'could not relay tool call progress'),
      );
  };
}

/**
 * Publishes a call's MCP log messages on the same channel as its progress, for calls whose caller asked
 * for them (call-logs.ts). Best effort as progress is: a lost message never fails the call.
 */
export function logRelay(store: Store, log: Logger): LogRelay {
  const channel = progressRelayChannel(store);
  return (bullId, call, message) =>
    channel
      .publish({ queue: toolQueueName(call.server), id: bullId, log: message })
      .catch((error: unknown) =>
        log.debug({ err: error, bull_job_id: bullId }, 'could not relay a tool call log message'),
      );
}
