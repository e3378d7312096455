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
  /** The shortest round trip of this measurement: its own samples alone put the offset within half of it. */
  rttMs: number;
  /** How far off the offset can be, in ms, given every measurement kept so far (within rttMs / 2 unless a reading disagreed with the earlier ones and replaced them). */
  errorMs: number;
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
  /** How often the offset is measured again once it is known to within `precisionMs` (default 30 s). */
  refreshMs?: number;
  /** Until the offset is known to within this many ms, it is measured again every `settleMs` (default 2). */
  precisionMs?: number;
  /** How often the offset is measured while it is less precise than `precisionMs` (default 1 s). */
  settleMs?: number;
  /**
   * Measurements every `settleMs` before it settles for the precision it has (default 10): a store whose
   * round trip is always longer than twice `precisionMs` gives readings that cannot narrow the bounds to
   * it, and measuring every second forever would only cost the store (one such measurement per process
   * per second). After these, every `refreshMs`; a reading that starts afresh (a step) settles again.
   */
  maxSettleRounds?: number;
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
const DEFAULT_PRECISION_MS = 2;
const DEFAULT_SETTLE_MS = 1_000;
const DEFAULT_MAX_SETTLE_ROUNDS = 10;
/**
 * How fast the kept bounds widen as time passes (parts per million): the server's clock and this
 * process's monotonic clock may run at slightly different rates (NTP slews within 500 ppm; disciplined
 * clocks stay far inside 100). A step or a faster drift leaves the bounds disjoint from the next reading,
 * which then starts afresh.
 */
const DRIFT_PPM = 100;

/** Where the server's epoch at monotonic 0 can be: every reading so far agrees with a value in here. */
interface BaseBounds {
  low: number;
  high: number;
  /** The monotonic time the bounds were last narrowed, from which they widen by DRIFT_PPM. */
  at: number;
}

/**
 * One clock for deadlines across machines: the store's (Redis `TIME`, or PostgreSQL's
 * `clock_timestamp()`). A call's `enqueuedAt` and `deadline` are stamped by the orchestrator and judged
 * by a worker, which may run on another host whose clock is minutes off; both read this clock instead of
 * their own (docs/semantics.md §6).
 *
 * It never asks the server per call: measurements map server time onto this process's monotonic clock,
 * and `now()` is that mapping applied to the monotonic clock. A reading taken between monotonic `before`
 * and `after` puts the mapping between two bounds (the server read its clock somewhere in that round
 * trip); the bounds of every reading are intersected, widened by the allowed drift as time passes, and
 * `now()` uses their middle. On a busy host one reading can be tens of ms off (its reply waited for the
 * event loop), which is as far as a deadline would be misjudged; the intersection keeps the best of
 * each side instead, and until the bounds are within `precisionMs` the measurement repeats every
 * `settleMs`. Basing it on the monotonic clock rather than Date.now also makes it immune to local
 * wall-clock steps between measurements. Until the first measurement, `now()` is Date.now.
 */
export class ServerClock implements Clock {
  /** Server epoch ms at monotonic 0 (the middle of `bounds`); undefined until the first measurement. */
  private base: number | undefined;
  private bounds: BaseBounds | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private measuring: Promise<ClockSample> | undefined;
  /** Measurements made every `settleMs` since the bounds were last precise or started afresh. */
  private settleRounds = 0;
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

  /**
   * Measures again every `settleMs` until the offset is precise (or `maxSettleRounds` times), then every
   * `refreshMs`, until stop().
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** How far off the offset can be now, in ms (infinite before the first measurement). */
  get errorMs(): number {
    if (!this.bounds) return Number.POSITIVE_INFINITY;
    const { low, high } = this.widened(this.bounds, this.monotonic());
    return (high - low) / 2;
  }

  private schedule(): void {
    if (this.stopped) return;
    const precise = this.errorMs <= (this.options.precisionMs ?? DEFAULT_PRECISION_MS);
    if (precise) this.settleRounds = 0;
    const settling =
      !precise && this.settleRounds < (this.options.maxSettleRounds ?? DEFAULT_MAX_SETTLE_ROUNDS);
    if (settling) this.settleRounds += 1;
    const delayMs = settling
      ? (this.options.settleMs ?? DEFAULT_SETTLE_MS)
      : (this.options.refreshMs ?? DEFAULT_REFRESH_MS);
    this.timer = setTimeout(() => {
      this.sync()
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => this.schedule());
    }, delayMs);
    this.timer.unref();
  }

  /** The bounds as they stand at monotonic `now`: wider by the drift allowed since they were narrowed. */
  private widened(bounds: BaseBounds, now: number): BaseBounds {
    const drift = (Math.max(0, now - bounds.at) * DRIFT_PPM) / 1e6;
    return { low: bounds.low - drift, high: bounds.high + drift, at: now };
  }

  /** Narrows the kept bounds with one reading's; a reading that disagrees with them replaces them. */
  private narrow(reading: BaseBounds): void {
    const kept = this.bounds && this.widened(this.bounds, reading.at);
    const low = kept ? Math.max(kept.low, reading.low) : reading.low;
    const high = kept ? Math.min(kept.high, reading.high) : reading.high;
    if (low > high) this.settleRounds = 0;
    this.bounds = low <= high ? { low, high, at: reading.at } : reading;
    this.base = (this.bounds.low + this.bounds.high) / 2;
  }

  private async measure(): Promise<ClockSample> {
    const samples = this.options.samples ?? DEFAULT_SAMPLES;
    if (samples < 1) throw new Error('ServerClock: samples must be at least 1');
    let rttMs = Number.POSITIVE_INFINITY;
    for (let index = 0; index < samples; index++) {
      const before = this.monotonic();
      const [seconds, micros] = await this.time();
      const after = this.monotonic();
      const serverMs = Number(seconds) * 1000 + Number(micros) / 1000;
      if (!Number.isFinite(serverMs))
        throw new Error(`the server clock gave an unreadable reply: ${seconds} ${micros}`);
      // The server read serverMs at some monotonic moment between before and after.
      this.narrow({ low: serverMs - after, high: serverMs - before, at: after });
      rttMs = Math.min(rttMs, after - before);
    }
    const sample = {
      offsetMs: this.offsetMs,
      rttMs: Math.round(rttMs * 10) / 10,
      errorMs: Math.round(this.errorMs * 10) / 10,
    };
    this.options.onSample?.(sample);
    return sample;
  }
}
