import { redisKeys } from '../naming.ts';
import type { RedisConnection } from '../redis-connection.ts';
import { encodeLatencySample, recentDurations } from './latency-sample-entries.ts';
import type { LatencySamples, LatencyWindow, ToolLatencies } from './latency-samples.ts';

/**
 * Two capped lists per tool call, newest first (redisKeys.latency: the tool's and its server's), whose
 * entries carry their finishing time (on the recording worker's clock) so entries past the window are
 * skipped when read.
 */
export class RedisLatencySamples implements LatencySamples {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  async record(
    server: string,
    tool: string,
    durationMs: number,
    { windowSamples, windowMs }: LatencyWindow,
  ): Promise<ToolLatencies> {
    const sample = encodeLatencySample(durationMs, Date.now());
    const keys = [redisKeys.latency(this.prefix, server, tool), redisKeys.latency(this.prefix, server)];
    const pipeline = this.redis.pipeline();
    for (const key of keys) {
      pipeline.lpush(key, sample).ltrim(key, 0, windowSamples - 1);
      // Lists of a tool nobody calls any more expire with the window instead of lingering.
      pipeline.pexpire(key, windowMs);
    }
    for (const key of keys) pipeline.lrange(key, 0, windowSamples - 1);
    const replies = (await pipeline.exec()) ?? [];
    const [toolDurations = [], serverDurations = []] = recentOf(replies.slice(-2), windowMs);
    return { tool: toolDurations, server: serverDurations };
  }

  async read(
    server: string,
    tools: readonly string[],
    { windowSamples, windowMs }: LatencyWindow,
  ): Promise<{ server: number[]; tools: number[][] }> {
    const keys = [
      redisKeys.latency(this.prefix, server),
      ...tools.map((tool) => redisKeys.latency(this.prefix, server, tool)),
    ];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.lrange(key, 0, windowSamples - 1);
    const replies = (await pipeline.exec()) ?? [];
    const [serverDurations = [], ...toolDurations] = recentOf(replies, windowMs);
    return { server: serverDurations, tools: toolDurations };
  }
}

function recentOf(replies: Array<[Error | null, unknown]>, windowMs: number): number[][] {
  const now = Date.now();
  return replies.map(([error, entries]) => {
    if (error) throw error;
    return recentDurations(entries as string[], now, windowMs);
  });
}
