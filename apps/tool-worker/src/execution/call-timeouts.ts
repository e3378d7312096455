import {
  type EffectiveTimeout,
  effectiveTimeout,
  encodeLatencySample,
  type RedisConnection,
  recentDurations,
  redisKeys,
  type ServerConfig,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';

/**
 * A worker re-reads the fleet's samples of a tool at most this often before a call; every success it
 * records reads them back in the same round trip, so a busy worker never reads separately.
 */
const REFRESH_MS = 1_000;
/**
 * A read that takes longer (a paused Redis) is not waited for: the call goes out with the last known
 * value, or `timeoutMs`. The timeout is a guess either way; holding the call would be worse.
 */
const READ_BUDGET_MS = 250;

interface Known {
  timeout: EffectiveTimeout;
  at: number;
}

/**
 * The per-attempt timeouts of one server's calls (docs/semantics.md §6). With `timeouts: adaptive` it
 * keeps the fleet's recent successful durations in two capped Redis lists per tool and server and
 * derives clamp(factor × P95, minMs, maxMs) from them; with `timeouts: static` it never touches Redis.
 */
export class CallTimeouts {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly deps: {
      server: string;
      config: ServerConfig;
      redis: RedisConnection;
      prefix: string;
      log: Logger;
    },
  ) {}

  /** The timeout of the next attempt of `tool`. */
  async forAttempt(tool: string): Promise<EffectiveTimeout> {
    const { config } = this.deps;
    if (config.timeouts === 'static') return effectiveTimeout(config, [], []);
    const known = this.known.get(tool);
    if (known && Date.now() - known.at < REFRESH_MS) return known.timeout;
    const fallback = known?.timeout ?? { timeoutMs: config.timeoutMs, basis: 'initial' as const, samples: 0 };
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<EffectiveTimeout>((resolve) => {
      timer = setTimeout(() => {
        this.deps.log.warn({ server: this.deps.server, tool }, 'latency samples unreadable in time');
        resolve(fallback);
      }, READ_BUDGET_MS);
    });
    const read = this.exchange(tool).catch((error: unknown) => {
      this.deps.log.warn({ server: this.deps.server, tool, err: error }, 'latency samples unreadable');
      return fallback;
    });
    try {
      return await Promise.race([read, budget]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Adds the duration of a successful call to the tool's and the server's windows (one pipelined round
   * trip that also reads them back). Not awaited by the call: losing a sample costs nothing but a
   * slightly older P95.
   */
  recordSuccess(tool: string, durationMs: number): void {
    if (this.deps.config.timeouts === 'static') return;
    this.exchange(tool, encodeLatencySample(durationMs, Date.now())).catch((error: unknown) =>
      this.deps.log.warn({ server: this.deps.server, tool, err: error }, 'latency sample not recorded'),
    );
  }

  /** One round trip: optionally pushes a sample onto both lists, then reads both back. */
  private async exchange(tool: string, sample?: string): Promise<EffectiveTimeout> {
    const { redis, prefix, server, config } = this.deps;
    const { windowSamples, windowMs } = config.adaptiveTimeouts;
    const keys = [redisKeys.latency(prefix, server, tool), redisKeys.latency(prefix, server)];
    const pipeline = redis.pipeline();
    if (sample !== undefined) {
      for (const key of keys) {
        pipeline.lpush(key, sample).ltrim(key, 0, windowSamples - 1);
        // Lists of a tool nobody calls any more expire with the window instead of lingering.
        pipeline.pexpire(key, windowMs);
      }
    }
    for (const key of keys) pipeline.lrange(key, 0, windowSamples - 1);
    const replies = (await pipeline.exec()) ?? [];
    const [toolEntries, serverEntries] = replies.slice(-2).map(([error, value]) => {
      if (error) throw error;
      return value as string[];
    }) as [string[], string[]];
    const now = Date.now();
    const timeout = effectiveTimeout(
      config,
      recentDurations(toolEntries, now, windowMs),
      recentDurations(serverEntries, now, windowMs),
    );
    this.known.set(tool, { timeout, at: now });
    return timeout;
  }
}
