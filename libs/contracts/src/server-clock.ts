import type pg from 'pg';
import type { RedisConnection } from './redis-connection.ts';
import type { Store } from './store/store.ts';

/** What the deadline code needs of a clock: epoch milliseconds (integer). */
export interface Clock {
  now(): number;
}

/** A server's time: seconds and microseconds since the epoch (the shape of Redis's `TIME` reply; PostgreSQL's is converted to it). */
export type ServerTimeReply = [string | number, string | number];

/** Reads the store's clock once. */
export type ServerTimeSource = () => Promise<ServerTimeReply>;

/** One measurement of where the server's clock stands against this process's monotonic clock. */
export interface ClockSample {
  /** Server time minus this process's wall clock (Date.now), in ms: what a skewed host is off by. */
  offsetMs: number;
  /** The round trip the sample came from: the offset is known to within half of it. */
  rttMs: number;
}

/**
 * The database's clock in microseconds since the epoch. clock_timestamp(), not now(): now() is the
 * start of the transaction, which a pooled connection may have begun earlier than the round trip.
 */
export const POSTGRES_CLOCK_SQL =
  'SELECT floor(extract(epoch FROM clock_timestamp()) * 1e6)::bigint AS micros';

/** Redis's `TIME` (a Cluster answers it from one of its nodes; they share NTP in practice). */
export function redisTime(redis: RedisConnection): ServerTimeSource {
  return () => redis.time() as Promise<ServerTimeReply>;
}

/** PostgreSQL's clock_timestamp(), read through `pool` (one query per reading). */
export function postgresTime(pool: pg.Pool): ServerTimeSource {
  return async () => {
    const micros = (await pool.query<{ micros: string }>(POSTGRES_CLOCK_SQL)).rows[0]?.micros;
    if (micros === undefined) throw new Error('PostgreSQL clock query returned no row');
    // bigint arrives as text: split it exactly rather than through a double.
    const value = BigInt(micros);
    return [String(value / 1_000_000n), String(value % 1_000_000n)];
  };
}

/** The time source of the deployment's store: the one clock every host of it reads. */
export function storeTime(store: Store): ServerTimeSource {
  return store.kind === 'redis' ? redisTime(store.redis) : postgresTime(store.pool);
}

export interface ServerClockOptions {
  /** How often the offset is measured again (default 30 s). */
  refreshMs?: number;
  /** TIME round trips per measurement; the one with the shortest round trip wins (default 3). */
  samples?: number;
  /** This process's monotonic clock in ms (default performance.now); injected by tests. */
  monotonic?: () => number;
  /** This process's wall clock in ms (default Date.now); only used to report the offset. */
  wall?: () => number;
  /** A measurement that failed (the server unreachable): the last offset stays in use. */
  onError?: (error: unknown) => void;
  /** Every successful measurement (logs). */
  onSample?: (sample: ClockSample) => void;
}

const DEFAULT_REFRESH_MS = 30_000;
const DEFAULT_SAMPLES = 3;

/**
 * One clock for deadlines across machines: the store's (Redis `TIME`, or PostgreSQL's
 * `clock_timestamp()`). A call's `enqueuedAt` and `deadline` are stamped by the orchestrator and judged
 * by a worker, which may run on another host whose clock is minutes off; both read this clock instead of
 * their own (docs/semantics.md §6).
 *
 * It never asks the server per call: a measurement maps server time onto this process's monotonic clock
 * (the server's reading is taken to be at the midpoint of the round trip, so the error is at most half
 * the round trip), and `now()` is that mapping applied to the monotonic clock. Basing it on the
 * monotonic clock rather than Date.now also makes it immune to local wall-clock steps between
 * measurements. Measurements repeat every `refreshMs` to follow drift; until the first one, `now()` is
 * Date.now.
 */
export class ServerClock implements Clock {
  /** Server epoch ms at monotonic 0; undefined until the first measurement. */
  private base: number | undefined;
  private rttMs = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private measuring: Promise<ClockSample> | undefined;
  private readonly monotonic: () => number;
  private readonly wall: () => number;

  constructor(
    private readonly time: ServerTimeSource,
    private readonly options: ServerClockOptions = {},
  ) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.wall = options.wall ?? Date.now;
  }

  /** The clock of the deployment's store, whichever backend it is. */
  static of(store: Store, options: ServerClockOptions = {}): ServerClock {
    return new ServerClock(storeTime(store), options);
  }

  /** The server's time now, in epoch ms. */
  now(): number {
    if (this.base === undefined) return this.wall();
    return Math.floor(this.base + this.monotonic());
  }

  get synced(): boolean {
    return this.base !== undefined;
  }

  /** Server time minus the local wall clock, ms (0 before the first measurement). */
  get offsetMs(): number {
    return this.base === undefined ? 0 : Math.round(this.base + this.monotonic() - this.wall());
  }

  /** Measures the offset now (one measurement at a time: a concurrent caller shares it). */
  sync(): Promise<ClockSample> {
    this.measuring ??= this.measure().finally(() => {
      this.measuring = undefined;
    });
    return this.measuring;
  }

  /** Measures at once and then every `refreshMs`, until stop(). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sync().catch((error: unknown) => this.options.onError?.(error));
    }, this.options.refreshMs ?? DEFAULT_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async measure(): Promise<ClockSample> {
    let best: { base: number; rttMs: number } | undefined;
    for (let index = 0; index < (this.options.samples ?? DEFAULT_SAMPLES); index++) {
      const before = this.monotonic();
      const [seconds, micros] = await this.time();
      const after = this.monotonic();
      const serverMs = Number(seconds) * 1000 + Number(micros) / 1000;
      if (!Number.isFinite(serverMs))
        throw new Error(`the server clock gave an unreadable reply: ${seconds} ${micros}`);
      const candidate = { base: serverMs - (before + after) / 2, rttMs: after - before };
      if (!best || candidate.rttMs < best.rttMs) best = candidate;
    }
    if (!best) throw new Error('ServerClock: samples must be at least 1');
    this.base = best.base;
    this.rttMs = best.rttMs;
    const sample = { offsetMs: this.offsetMs, rttMs: Math.round(this.rttMs * 10) / 10 };
    this.options.onSample?.(sample);
    return sample;
  }
}
