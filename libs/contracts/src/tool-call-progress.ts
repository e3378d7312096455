import { z } from 'zod';

/**
 * One MCP progress notification of a running tool call, published by the worker on
 * redisKeys.progress so the orchestrator replica waiting for the call can record and forward it.
 */
export const ToolCallProgressSchema = z.object({
  /** The BullMQ queue name (toolQueueName) and job id of the call. */
  queue: z.string().min(1),
  id: z.string().min(1),
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().max(2_000).optional(),
});
export type ToolCallProgress = z.infer<typeof ToolCallProgressSchema>;

/** MCP's log levels (`logging/setLevel`, `notifications/message`), least severe first. */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export const LogLevelSchema = z.enum(LOG_LEVELS);
export type LogLevel = z.infer<typeof LogLevelSchema>;

/** Whether a message at `level` passes a client's threshold (`logging/setLevel` or the per-request level). */
export function logLevelPasses(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/**
 * The longest a relayed log message's `data` may be, as JSON text: a server's words are untrusted, and
 * the worker cuts a longer one to a string (log-message.ts) before it travels.
 */
export const MAX_LOG_DATA_CHARS = 4_000;

/**
 * One MCP log message (`notifications/message`) a running tool call's server sent, for a call whose
 * /mcp client asked for its logs (the call's `logLevel`); relayed on the same channel as progress.
 */
export const ToolCallLogSchema = z.object({
  queue: z.string().min(1),
  id: z.string().min(1),
  log: z.object({
    level: LogLevelSchema,
    logger: z.string().max(200).optional(),
    data: z.unknown().refine((data) => (JSON.stringify(data) ?? '').length <= MAX_LOG_DATA_CHARS, {
      message: `log data over ${MAX_LOG_DATA_CHARS} characters of JSON`,
    }),
  }),
});
export type ToolCallLog = z.infer<typeof ToolCallLogSchema>;

/** What the relay channel carries for a running call: its progress or one of its log messages. */
export const RelayedCallMessageSchema = z.union([ToolCallProgressSchema, ToolCallLogSchema]);
export type RelayedCallMessage = ToolCallProgress | ToolCallLog;

export function isCallLog(message: RelayedCallMessage): message is ToolCallLog {
  return 'log' in message;
}
