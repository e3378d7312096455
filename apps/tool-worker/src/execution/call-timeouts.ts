import {
  type EffectiveTimeout,
  effectiveTimeout,
  type LatencySamples,
  latencySamples,
  type ServerConfig,
  type Store,
  type ToolLatencies,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';

/**
 * A worker re-reads the fleet's samples of a tool at most this often before a call; every success it
 * records reads them back in the same round trip, so a busy worker never reads separately.
 */
const REFRESH_MS = 1_000;
/**
 * A read that takes longer (a paused store) is not waited for: the call goes out with the last known
 * value, or `timeoutMs`. The timeout is a guess either way; holding the call would be worse.
 */
const READ_BUDGET_MS = 250;

interface Known {
  timeout: EffectiveTimeout;
  at: number;
}

/**
 * The per-attempt timeouts of one server's calls (docs/semantics.md §6). With `timeouts: adaptive` it
 * keeps the fleet's recent successful durations per tool and server in the store (LatencySamples) and
 * derives clamp(factor × P95, minMs, maxMs) from them; with `timeouts: static` it never touches the store.
 */
export class CallTimeouts {
  private readonly known = new Map<string, Known>();
  private readonly samples: LatencySamples;

  constructor(
    private readonly deps: {
      server: string;
      config: ServerConfig;
      store: Store;
      log: Logger;
    },
  ) {
    this.samples = latencySamples(deps.store, {
      onTrimError: (error) =>
        deps.log.warn({ server: deps.server, err: error }, 'latency samples not trimmed'),
    });
  }

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
    const read = this.exchange(tool, () => this.readWindows(tool)).catch((error: unknown) => {
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
   * Adds the duration of a successful call to the tool's and the server's windows (one round trip that
   * also reads them back). Not awaited by the call: losing a sample costs nothing but a slightly older P95.
   */
  recordSuccess(tool: string, durationMs: number): void {
    const { config, server } = this.deps;
    if (config.timeouts === 'static') return;
    this.exchange(tool, () => this.samples.record(server, tool, durationMs, config.adaptiveTimeouts)).catch(
      (error: unknown) => this.deps.log.warn({ server, tool, err: error }, 'latency sample not recorded'),
    );
  }

  private async readWindows(tool: string): Promise<ToolLatencies> {
    const { server, config } = this.deps;
    const read = await this.samples.read(server, [tool], config.adaptiveTimeouts);
    return { tool: read.tools[0] ?? [], server: read.server };
  }

  /** One round trip (a read, or a record that reads back): the windows become the tool's timeout. */
  private async exchange(tool: string, windows: () => Promise<ToolLatencies>): Promise<EffectiveTimeout> {
    const durations = await windows();
    const timeout = effectiveTimeout(this.deps.config, durations.tool, durations.server);
    this.known.set(tool, { timeout, at: Date.now() });
    return timeout;
  }
}
