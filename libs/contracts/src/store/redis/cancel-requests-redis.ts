import { redisKeys } from '../../naming.ts';
import { duplicateRedis, type RedisConnection } from '../../redis-connection.ts';
import type { ToolCallCancel } from '../../tool-call.ts';
import type { CancelRequests, Unsubscribe } from '../cancel-requests.ts';
import { subscribeChannels } from './subscribed-connection.ts';

/** Cancel requests over Redis pub/sub (`redisKeys.cancels`): one PUBLISH per request, its whole JSON. */
export class RedisCancelRequests implements CancelRequests {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async publish(request: ToolCallCancel): Promise<void> {
    await this.redis.publish(redisKeys.cancels(this.prefix), JSON.stringify(request));
  }

  async subscribe(
    handler: (message: string) => void,
    options: { connectionName: string; onError: (error: unknown) => void },
  ): Promise<Unsubscribe> {
    const subscriber = await subscribeChannels(
      duplicateRedis(this.redis, options.connectionName),
      { [redisKeys.cancels(this.prefix)]: handler },
      options.onError,
    );
    return async () => {
      await subscriber.quit().catch(() => subscriber.disconnect());
    };
  }
}
