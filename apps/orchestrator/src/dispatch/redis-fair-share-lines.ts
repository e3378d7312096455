import { type Clock, type RedisConnection, redisKeys } from '@switchyard/contracts';
import type { FairShareLines } from './fair-share-lines.ts';

/** A line is a sorted set scored by each call's start deadline (redisKeys.teamLine). */
export class RedisFairShareLines implements FairShareLines {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly clock: Clock,
  ) {}

  async enter(server: string, team: string, callId: string, deadline: number): Promise<number> {
    const key = redisKeys.teamLine(this.prefix, server, team);
    // One key, so one slot: a MULTI is one round trip on a cluster too.
    const replies = await this.redis
      .multi()
      .zremrangebyscore(key, '-inf', this.clock.now())
      .zadd(key, deadline, callId)
      .zcard(key)
      // The line outlives its latest deadline, no longer: a team that stops calling leaves no key.
      .pexpireat(key, deadline, 'NX')
      .pexpireat(key, deadline, 'GT')
      .exec();
    return Number(replies?.[2]?.[1] ?? 1);
  }

  async leave(server: string, team: string, callId: string): Promise<void> {
    await this.redis.zrem(redisKeys.teamLine(this.prefix, server, team), callId);
  }
}
