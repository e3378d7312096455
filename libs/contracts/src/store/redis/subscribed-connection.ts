import type { RedisConnection } from '../../redis-connection.ts';

/**
 * Subscribes `subscriber` (a connection of its own: a subscribed one can do nothing else; ioredis
 * subscribes it again after a reconnect) to each channel, handing every message to that channel's
 * handler. A subscription that fails disconnects it before the error is thrown; the caller ends it when done.
 */
export async function subscribeChannels(
  subscriber: RedisConnection,
  channels: Readonly<Record<string, (message: string) => void>>,
  onError: (error: unknown) => void,
): Promise<RedisConnection> {
  subscriber.on('error', onError);
  subscriber.on('message', (channel: string, message: string) => channels[channel]?.(message));
  try {
    await subscriber.subscribe(...Object.keys(channels));
  } catch (error) {
    subscriber.disconnect();
    throw error;
  }
  return subscriber;
}
