import { Inject, Injectable, type OnApplicationShutdown, ServiceUnavailableException } from '@nestjs/common';
import {
  duplicateRedis,
  type RedisConnection,
  type Store,
  type SwitchyardConfig,
} from '@switchyard/contracts';
import type pg from 'pg';
import { createPool } from './database.ts';
import { DependencyTimeoutError } from './dependency-errors.ts';
import type { Logger } from './logger.ts';
import type { OrchestratorEnv } from './orchestrator-env.ts';
import { CONFIG, ENV, LOGGER, STORE } from './tokens.ts';

export type Dependency = 'postgres' | 'redis';
/** Each dependency of this backend: 'ok' or why not. On postgres there is no `redis` entry at all. */
export type DependencyReport = Partial<Record<Dependency, string>>;

/** A good answer is trusted this long, so a burst of requests costs one probe, not one each. */
const OK_FOR_MS = 500;
/** The longest a probe may take before it counts as failed and its connection is replaced. */
const PROBE_LIMIT_MS = 5_000;

function withTimeout<T>(work: Promise<T>, dependency: Dependency, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    // Deferred past the poll phase: an answer that arrived while the event loop was stalled (a busy
    // machine) is read before the stall is taken for an outage.
    timer = setTimeout(() => setImmediate(() => reject(new DependencyTimeoutError(dependency, ms))), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Probes PostgreSQL and, on the redis backend, Redis within `orchestrator.dependencyTimeoutMs`. On the
 * postgres backend the queue schema lives in the job store's database, so its probe covers the queues
 * too and Redis is not a dependency (no connection to it is made). A request that would
 * otherwise queue behind a paused Redis (ioredis holds commands until it answers) or a restarting
 * PostgreSQL asks first and is answered 503 at once.
 *
 * The probes use connections of their own: behind the shared pool and command connection they would
 * wait for a busy replica's queries and call that an outage.
 *
 * At most one probe per dependency is in flight; every request that asks meanwhile waits for that one
 * (each within its own time limit). Otherwise, while a dependency is slow, every retried request adds a
 * probe behind the ones that already timed out, the probes' own line outgrows what the dependency
 * answers, and the replica answers 503 long after the dependency is back. A probe's query is bounded by
 * PROBE_LIMIT_MS on the PostgreSQL side (the stuck connection is dropped and the next probe opens a new
 * one), so a connection that never answers cannot hold the probe forever.
 */
@Injectable()
export class DependencyHealth implements OnApplicationShutdown {
  private readonly okUntil: Record<Dependency, number> = { postgres: 0, redis: 0 };
  private readonly inFlight: Partial<Record<Dependency, Promise<void>>> = {};
  private readonly timeoutMs: number;
  private readonly redis: RedisConnection | undefined;
  private readonly pool: pg.Pool;
  /** Where the queues live: reported by /health/ready next to the dependencies. */
  readonly backend: Store['kind'];
  /** Every dependency of this backend: PostgreSQL, and Redis when the queues are there. */
  readonly all: readonly Dependency[];

  constructor(
    @Inject(STORE) store: Store,
    @Inject(ENV) env: OrchestratorEnv,
    @Inject(CONFIG) config: SwitchyardConfig,
    @Inject(LOGGER) log: Logger,
  ) {
    this.timeoutMs = config.orchestrator.dependencyTimeoutMs;
    this.backend = store.kind;
    this.all = store.kind === 'redis' ? ['postgres', 'redis'] : ['postgres'];
    if (store.kind === 'redis') {
      this.redis = duplicateRedis(store.redis, `switchyard-orchestrator-${env.replicaId}-health`);
      this.redis.on('error', (error) => log.debug({ err: error }, 'redis health connection error'));
    }
    this.pool = createPool(env.databaseUrl, env.databaseSchema, log, 1, {
      queryTimeoutMs: Math.max(PROBE_LIMIT_MS, this.timeoutMs),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis?.disconnect();
    await this.pool.end();
  }

  /** For every dependency of this backend: 'ok', or why it is not usable right now. */
  async check(): Promise<DependencyReport> {
    const states = await Promise.all(this.all.map((dependency) => this.probe(dependency)));
    return Object.fromEntries(this.all.map((dependency, index) => [dependency, states[index]]));
  }

  /** `require` of every dependency of this backend: what a request that touches the queues needs. */
  requireAll(options: { fresh?: boolean; timeoutMs?: number } = {}): Promise<void> {
    return this.require([...this.all], options);
  }

  /**
   * Throws a 503 naming every dependency in `needed` that does not answer within `timeoutMs` (default
   * orchestrator.dependencyTimeoutMs). `fresh` asks again even after a recent good answer.
   */
  async require(needed: Dependency[], options: { fresh?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const now = Date.now();
    const unknown = needed.filter((dependency) => options.fresh || this.okUntil[dependency] < now);
    if (unknown.length === 0) return;
    const results = await Promise.all(
      unknown.map(async (dependency) => [dependency, await this.probe(dependency, options.timeoutMs)]),
    );
    const missing = results.filter(([, state]) => state !== 'ok');
    if (missing.length === 0) return;
    throw new ServiceUnavailableException({
      statusCode: 503,
      error: 'Service Unavailable',
      message: `unavailable: ${missing.map(([dependency, state]) => `${dependency} (${state})`).join(', ')}; try again later`,
      missing: missing.map(([dependency]) => dependency),
    });
  }

  private async probe(dependency: Dependency, timeoutMs = this.timeoutMs): Promise<string> {
    try {
      await withTimeout(this.ask(dependency), dependency, timeoutMs);
      return 'ok';
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** The probe in flight for `dependency`, or a new one. */
  private ask(dependency: Dependency): Promise<void> {
    const running = this.inFlight[dependency];
    if (running) return running;
    const work: Promise<unknown> =
      dependency === 'postgres'
        ? this.pool.query('SELECT 1')
        : this.redis
          ? withTimeout(this.redis.ping(), dependency, Math.max(PROBE_LIMIT_MS, this.timeoutMs))
          : Promise.reject(new Error(`redis is not a dependency of the ${this.backend} backend`));
    const probe = work.then(
      () => {
        this.okUntil[dependency] = Date.now() + OK_FOR_MS;
      },
      (error: unknown) => {
        this.okUntil[dependency] = 0;
        throw error;
      },
    );
    this.inFlight[dependency] = probe.finally(() => {
      delete this.inFlight[dependency];
    });
    return this.inFlight[dependency];
  }
}
