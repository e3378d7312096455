import { Inject, Injectable } from '@nestjs/common';
import {
  type EffectiveTimeout,
  effectiveTimeout,
  type LatencySamples,
  latencySamples,
  type Store,
  type SwitchyardConfig,
} from '@switchyard/contracts';
import { CONFIG, STORE } from '../runtime/tokens.ts';

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
 * the same effective timeouts the workers apply, from the same samples: one round trip per server.
 */
@Injectable()
export class FleetTimeouts {
  private readonly samples: LatencySamples;

  constructor(
    @Inject(CONFIG) private readonly config: SwitchyardConfig,
    @Inject(STORE) store: Store,
  ) {
    this.samples = latencySamples(store);
  }

  async view(server: string, tools: readonly string[]): Promise<TimeoutsView | undefined> {
    const config = this.config.servers[server];
    if (!config) return undefined;
    const common = { mode: config.timeouts, maxTimeoutMs: config.maxTimeoutMs };
    if (config.timeouts === 'static') return { ...common, server: effectiveTimeout(config, [], []) };
    const { server: serverDurations, tools: toolDurations } = await this.samples.read(
      server,
      tools,
      config.adaptiveTimeouts,
    );
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
