import type { ToolCallCancel } from '../../tool-call.ts';
import type { CancelRequests, Unsubscribe } from '../cancel-requests.ts';
import type { PostgresStore } from '../store.ts';
import { MAX_NOTIFY_PAYLOAD_BYTES, notificationChannel, payloadBytes } from './notification-channel.ts';
import { NotificationListener } from './notification-listener.ts';

/** Every part of one request in one statement: one round trip, delivered together and in order. */
export const NOTIFY_CANCELS_SQL = 'SELECT pg_notify($1, part) FROM unnest($2::text[]) AS part';

/** Cancel requests as NOTIFY on `<schema>_cancels`, a request split to fit the payload limit. */
export class PostgresCancelRequests implements CancelRequests {
  private readonly channel: string;

  constructor(private readonly store: PostgresStore) {
    this.channel = notificationChannel(store.schema, 'cancels');
  }

  async publish(request: ToolCallCancel): Promise<void> {
    await this.store.pool.query(NOTIFY_CANCELS_SQL, [this.channel, cancelPayloads(request)]);
  }

  async subscribe(
    handler: (message: string) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const listener = await NotificationListener.open({
      url: this.store.url,
      applicationName: options.connectionName,
      channels: { [this.channel]: handler },
      onError: (error, what) => options.onError(new Error(`cancel requests: ${what}`, { cause: error })),
    });
    return () => listener.close();
  }
}

/**
 * A request as NOTIFY payloads under the size limit: the same queue and reason in each, its calls
 * spread over as few as fit (about 180 call ids each). A worker treats each part as a request of its own,
 * which is what it is: cancelling some calls of the queue.
 */
export function cancelPayloads(request: ToolCallCancel, limit = MAX_NOTIFY_PAYLOAD_BYTES): string[] {
  const whole = JSON.stringify(request);
  if (payloadBytes(whole) <= limit) return [whole];
  const { id, ids = [], ...common } = request;
  const calls = id === undefined ? ids : [id, ...ids];
  const payloads: string[] = [];
  // `{…,"ids":[]}`: each id then adds its JSON and a comma.
  const emptyBytes = payloadBytes(JSON.stringify({ ...common, ids: [] }));
  let next = 0;
  while (next < calls.length) {
    const part: string[] = [];
    let bytes = emptyBytes;
    for (; next < calls.length; next += 1) {
      const call = calls[next] as string;
      const added = payloadBytes(JSON.stringify(call)) + (part.length > 0 ? 1 : 0);
      if (bytes + added > limit) break;
      part.push(call);
      bytes += added;
    }
    if (part.length === 0) {
      throw new Error(`a cancel request for ${request.queue} names a call id too long for one notification`);
    }
    payloads.push(JSON.stringify({ ...common, ids: part }));
  }
  return payloads;
}
