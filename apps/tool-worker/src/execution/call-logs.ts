import type { LoggingMessageNotificationParams } from '@modelcontextprotocol/client';
import {
  type LogLevel,
  logLevelPasses,
  MAX_LOG_DATA_CHARS,
  type ToolCallJob,
  type ToolCallLog,
} from '@switchyard/contracts';
import type { LogRelay } from './progress-relay.ts';

/**
 * How many of a call's log messages may be relayed: a burst of LOG_BURST at once, then LOG_PER_SECOND.
 * Unlike progress (where the newest replaces the rest, progress-throttle.ts), every log line is its own
 * message, so none is held back and none replaces another: past the budget they are dropped and
 * counted, and the client is told how many once the call ends.
 */
export const LOG_BURST = 20;
export const LOG_PER_SECOND = 10;
const MAX_LOGGER_CHARS = 200;

export interface CallLogs {
  /** The session's handler for this call's log messages. */
  onLog: (message: LoggingMessageNotificationParams) => void;
  /** Waits for every relayed message (the outcome must come after them) and reports what was dropped. */
  close(): Promise<void>;
}

/**
 * The relay of one call's MCP log messages (docs/semantics.md §16): only for a call whose caller asked
 * for logs (`logLevel`), only messages at or above that level, each bounded (the server's words are
 * untrusted: its data cut to MAX_LOG_DATA_CHARS of JSON, its logger name to 200 characters) and within
 * the budget above. Published on the call's own queue job id, which only its job's replica listens for.
 */
export function callLogs(
  relay: LogRelay,
  bullId: string,
  call: ToolCallJob,
  threshold: LogLevel,
  now: () => number = Date.now,
): CallLogs {
  let tokens = LOG_BURST;
  let refilledAt = now();
  let dropped = 0;
  // One publish after another: on PostgreSQL each is a NOTIFY on whichever pooled connection is free,
  // and two in flight at once may commit (and reach the client) in the other order.
  let chain: Promise<void> = Promise.resolve();
  const send = (log: ToolCallLog['log']) => {
    chain = chain.then(() => relay(bullId, call, log));
  };
  const take = () => {
    const at = now();
    tokens = Math.min(LOG_BURST, tokens + ((at - refilledAt) * LOG_PER_SECOND) / 1000);
    refilledAt = at;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
  return {
    onLog: (message) => {
      if (!logLevelPasses(message.level, threshold)) return;
      if (!take()) {
        dropped += 1;
        return;
      }
      send(boundedLog(message));
    },
    async close() {
      if (dropped > 0) {
        send({
          level: 'warning',
          logger: 'switchyard',
          data: `${dropped} log message(s) of ${call.server}/${call.tool} were not relayed: more than ${LOG_BURST} at once or ${LOG_PER_SECOND} a second`,
        });
      }
      await chain;
    },
  };
}

/** The message as it may travel: data within MAX_LOG_DATA_CHARS of JSON (else its cut text), logger cut. */
export function boundedLog(message: LoggingMessageNotificationParams): ToolCallLog['log'] {
  const json = JSON.stringify(message.data) ?? 'null';
  const data =
    json.length <= MAX_LOG_DATA_CHARS
      ? message.data
      : `${json.slice(0, MAX_LOG_DATA_CHARS - 100).replace(/[\uD800-\uDBFF]$/, '')}… [cut: ${json.length} characters of JSON]`;
  return {
    level: message.level,
    ...(typeof message.logger === 'string' ? { logger: message.logger.slice(0, MAX_LOGGER_CHARS) } : {}),
    data: data ?? null,
  };
}
