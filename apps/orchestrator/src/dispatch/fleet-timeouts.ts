import { Inject, Injectable } from '@nestjs/common';
import {
  type EffectiveTimeout,
  effectiveTimeout,
  type RedisConnection,
  recentDurations,
  redisKeys,
  type SwitchyardConfig,
} from '@switchyard/contracts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { CONFIG, ENV, REDIS } from '../runtime/tokens.ts';

/** A server's per-attempt timeouts as /v1/servers shows them. */
export interface TimeoutsView {
  mode: 'static' | 'adaptive';
  /** The hard cap progress may extend a call to. */
  maxTimeoutMs: number;
  /** What the next call of a tool without enough samples of its own gets. */
  server: EffectiveTimeout;
  /** Adaptive only: what the next call of each tool gets. */
  tools?: Record<string, EffectiveTimeout>;
}

/**
 * Reads the fleet's latency windows (written by the workers, see the worker's CallTimeouts) and derives
 * the same effective timeouts the workers apply, from the same samples: one pipelined read per server.
 */
@Injectable()
export class FleetTimeouts {
  constructor(
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(REDIS) private readonly redis: RedisConnection,
  ) {}

  async view(server: string, tools: readonly string[]): Promise<TimeoutsView | undefined> {
    const config = this.config.servers[server];
    if (!config) return undefined;
    const common = { mode: config.timeouts, maxTimeoutMs: config.maxTimeoutMs };
    if (config.timeouts === 'static') return { ...common, server: effectiveTimeout(config, [], []) };
    const { windowSamples, windowMs } = config.adaptiveTimeouts;
    const keys = [
      redisKeys.latency(this.env.prefix, server),
      ...tools.map((tool) => redisKeys.latency(this.env.prefix, server, tool)),
    ];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.lrange(key, 0, windowSamples - 1);
    const replies = (await pipeline.exec()) ?? [];
    const now = Date.now();
    const [serverDurations = [], ...toolDurations] = replies.map(([error, entries]) => {
      if (error) throw error;
      return recentDurations(entries as string[], now, windowMs);
    });
    return {
      ...common,
      server: effectiveTimeout(config, [], serverDurations),
      tools: Object.fromEntries(
        tools.map((tool, index) => [
          tool,
          effectiveTimeout(config, toolDurations[index] ?? [], serverDurations),
        ]),
      ),
    };
  }
}
