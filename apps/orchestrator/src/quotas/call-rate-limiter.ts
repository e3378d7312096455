import type { RedisConnection } from '@switchyard/contracts';

/**
 * GCRA (the generic cell rate algorithm, a token bucket kept as one timestamp) as one Lua script, so
 * every replica draws on the same budget atomically. It never refuses: each call reserves the next free
 * slot and is told how long to wait for it. `limit` calls pass at once, then one every minute / limit.
 * Redis's clock is the only clock, so replicas with skewed clocks agree.
 *
 * KEYS[1] the team's theoretical arrival time (ms); ARGV[1] interval between calls (ms); ARGV[2] burst.
 */
const RESERVE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local reserved = tat + interval
local delay = reserved - interval * tonumber(ARGV[2]) - now
if delay < 0 then delay = 0 end
redis.call('SET', KEYS[1], string.format('%.3f', reserved), 'PX', math.ceil(reserved - now) + 1000)
return math.ceil(delay)
`;

const WINDOW_MS = 60_000;

type WithReserve = RedisConnection & {
  switchyardReserveCall(key: string, intervalMs: number, burst: number): Promise<number>;
};

/** A team's tool calls per minute across the fleet (teams.<t>.callsPerMinute). */
export class CallRateLimiter {
  private readonly redis: WithReserve;

  constructor(
    redis: RedisConnection,
    private readonly prefix: string,
  ) {
    redis.defineCommand('switchyardReserveCall', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
    this.redis = redis as WithReserve;
  }

  /** Reserves a slot for one call of `team`; resolves with how many ms the call must wait for it. */
  async reserve(team: string, perMinute: number): Promise<number> {
    const key = `${this.prefix}:quota:calls:${team}`;
    return Number(await this.redis.switchyardReserveCall(key, WINDOW_MS / perMinute, perMinute));
  }
}
