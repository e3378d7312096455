import { type RedisConnection, redisKeys } from '@switchyard/contracts';
import type { EpochSlots } from './queue-epochs.ts';

/** Epochs as Redis keys (redisKeys.epoch), one per hash slot that matters: SET NX, then GET. */
export class RedisEpochSlots implements EpochSlots {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async epochOf(tag: string, candidate: string): Promise<string> {
    const key = redisKeys.epoch(this.prefix, tag);
    // Another replica may create it at the same moment: SET NX picks one, and everyone reads that one.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const created = (await this.redis.set(key, candidate, 'NX')) === 'OK';
      const epoch = created ? candidate : await this.redis.get(key);
      if (epoch) return epoch;
      // Deleted between the two commands (a FLUSHALL): create it again.
    }
    throw new Error(`the Redis epoch ${key} vanished three times while it was being read`);
  }
}
