import {
  isCallLog,
  type RelayedCallMessage,
  type ToolCallLog,
  type ToolCallProgress,
} from '../../tool-call-progress.ts';
import type { Unsubscribe } from '../cancel-requests.ts';
import { parseProgressMessage } from '../progress-messages.ts';
import type { ProgressRelayChannel } from '../progress-relay.ts';
import type { PostgresStore } from '../store.ts';
import { MAX_NOTIFY_PAYLOAD_BYTES, notificationChannel, payloadBytes } from './notification-channel.ts';
import { NotificationListener } from './notification-listener.ts';

export const NOTIFY_PROGRESS_SQL = 'SELECT pg_notify($1, $2)';

/** Progress and log messages as NOTIFY on `<schema>_progress`, cut so the payload fits. */
export class PostgresProgressRelay implements ProgressRelayChannel {
  private readonly channel: string;

  constructor(private readonly store: PostgresStore) {
    this.channel = notificationChannel(store.schema, 'progress');
  }

  async publish(message: RelayedCallMessage): Promise<void> {
    const payload = isCallLog(message) ? logPayload(message) : progressPayload(message);
    await this.store.pool.query(NOTIFY_PROGRESS_SQL, [this.channel, payload]);
  }

  async subscribe(
    handler: (message: RelayedCallMessage) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const listener = await NotificationListener.open({
      url: this.store.url,
      applicationName: options.connectionName,
      channels: {
        [this.channel]: (payload) => {
          const relayed = parseProgressMessage(payload);
          if (relayed) handler(relayed);
        },
      },
      onError: (error, what) => options.onError(new Error(`progress relay: ${what}`, { cause: error })),
    });
    return () => listener.close();
  }
}

/**
 * The progress as JSON within the NOTIFY limit. Only the message can be long (2,000 characters, but
 * escaped or multi-byte it may pass 8,000 bytes): it is shortened until the whole fits, dropped if even
 * an empty one would not.
 */
export function progressPayload(progress: ToolCallProgress, limit = MAX_NOTIFY_PAYLOAD_BYTES): string {
  let payload = JSON.stringify(progress);
  let message = progress.message;
  while (payloadBytes(payload) > limit && message) {
    // Shrinks in proportion to the excess; at least one character per pass, so it ends.
    const keep = Math.min(message.length - 1, Math.floor((message.length * limit) / payloadBytes(payload)));
    // A cut through a surrogate pair would leave half a character.
    message = message.slice(0, Math.max(keep, 0)).replace(/[\uD800-\uDBFF]$/, '');
    payload = JSON.stringify({ ...progress, message });
  }
  if (payloadBytes(payload) > limit) {
    const { message: _dropped, ...rest } = progress;
    payload = JSON.stringify(rest);
  }
  return payload;
}

/**
 * A log message as JSON within the NOTIFY limit. Its data is at most MAX_LOG_DATA_CHARS of JSON, but
 * escaped again or multi-byte it may not fit: then it travels as a string saying it was too long,
 * rather than not at all (the client still learns the server logged something at that level).
 */
export function logPayload(message: ToolCallLog, limit = MAX_NOTIFY_PAYLOAD_BYTES): string {
  const payload = JSON.stringify(message);
  if (payloadBytes(payload) <= limit) return payload;
  const data = `[log message of ${payloadBytes(JSON.stringify(message.log.data))} bytes, over what the relay carries]`;
  return JSON.stringify({ ...message, log: { ...message.log, data } });
}
