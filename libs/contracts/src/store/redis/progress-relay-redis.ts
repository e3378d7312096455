import { redisKeys } from '../../naming.ts';
import { duplicateRedis, type RedisConnection } from '../../redis-connection.ts';
import type { RelayedCallMessage } from '../../tool-call-progress.ts';
import type { Unsubscribe } from '../cancel-requests.ts';
import { parseProgressMessage } from '../progress-messages.ts';
import type { ProgressRelayChannel } from '../progress-relay.ts';
import { subscribeChannels } from './subscribed-connection.ts';

/** Progress and log messages over Redis pub/sub (`redisKeys.progress`), one message per notification. */
export class RedisProgressRelay implements ProgressRelayChannel {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async publish(message: RelayedCallMessage): Promise<void> {
    await this.redis.publish(redisKeys.progress(this.prefix), JSON.stringify(message));
  }

  async subscribe(
    handler: (message: RelayedCallMessage) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const subscriber = await subscribeChannels(
      duplicateRedis(this.redis, options.connectionName),
      {
        [redisKeys.progress(this.prefix)]: (message) => {
          const relayed = parseProgressMessage(message);
          if (relayed) handler(relayed);
        },
      },
      options.onError,
    );
    return async () => {
      subscriber.disconnect();
    };
  }
}
