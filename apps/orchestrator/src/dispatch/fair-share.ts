import { type Clock, type RedisConnection, redisKeys, type SwitchyardConfig } from '@switchyard/contracts';

/** BullMQ's largest priority (2^21); lower runs first, equal priorities run in arrival order. */
const MAX_PRIORITY = 2_097_152;

/**
 * Fair share of a busy server between teams, built on BullMQ priorities (docs/semantics.md §1).
 *
 * Each team has a line per server: its calls not yet settled there. A new call's priority is its
 * place in its own team's line divided by the team's weight, so a team with 200 calls waiting gets
 * priorities 1…200 while another team's first call gets 1 and runs next: teams take turns, whatever
 * arrived first. Every call of such a server gets a priority — BullMQ runs calls without one before
 * all prioritized calls.
 *
 * The line is a sorted set scored by each call's start deadline: joining it is idempotent (a resumed
 * run re-dispatching the same call does not count twice), leaving it too (any replica may settle a
 * call), and a call nobody settled (its orchestrator gone for good) drops out at its deadline, by
 * which time it has started or expired.
 */
export class FairShare {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly config: SwitchyardConfig,
    /** The clock the deadlines (scores) are on: Redis's (RedisClock). */
    private readonly clock: Clock = { now: Date.now },
  ) {}

  /** The BullMQ priority for a call, or undefined when the server runs calls in arrival order. */
  async enter(server: string, team: string, callId: string, deadline: number): Promise<number | undefined> {
    if (this.config.servers[server]?.fairness !== 'teams') return undefined;
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
    const place = Number(replies?.[2]?.[1] ?? 1);
    const weight = this.config.teams[team]?.weight ?? 1;
    return Math.min(MAX_PRIORITY, Math.max(1, Math.ceil(place / weight)));
  }

  /** The call settled: it no longer holds its team back. */
  leave(server: string, team: string, callId: string): Promise<unknown> {
    if (this.config.servers[server]?.fairness !== 'teams') return Promise.resolve();
    return this.redis.zrem(redisKeys.teamLine(this.prefix, server, team), callId);
  }
}
