import type { RedisConnection } from '@switchyard/contracts';
import { type CallQuota, QUOTA_WINDOW_MS } from './call-quota.ts';

/**
 * The reservation as one Lua script on Redis's clock (TIME).
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

type WithReserve = RedisConnection & {
  switchyardReserveCall(key: string, intervalMs: number, burst: number): Promise<number>;
};

export class RedisCallQuota implements CallQuota {
  private readonly redis: WithReserve;

  constructor(
    redis: RedisConnection,
    private readonly prefix: string,
  ) {
    redis.defineCommand('switchyardReserveCall', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
    this.redis = redis as WithReserve;
  }

  async reserve(team: string, perMinute: number): Promise<number> {
    const key = `${this.prefix}:quota:calls:${team}`;
    return Number(await this.redis.switchyardReserveCall(key, QUOTA_WINDOW_MS / perMinute, perMinute));
  }
}
