import type { ClockSample } from './server-clock.ts';
import type { Store } from './store/store.ts';

/** Where a process stands against the store's clock, as its consumers and /health see it. */
export interface ClockOffsetState {
  /** True while this process must take no job and run no stalled check. */
  refusing: boolean;
  /** The last measured offset (store minus this host), ms. */
  offsetMs: number;
  /** The round trip that offset came from: it is known to within half of it. */
  rttMs: number;
  /** The largest |offset| a process may have and still take jobs (lockDurationMs / 10). */
  limitMs: number;
}

/** The store's name as logs and /health say it. */
export function storeName(store: Pick<Store, 'kind'>): string {
  return store.kind === 'postgres' ? 'PostgreSQL' : 'Redis';
}

/**
 * The clock-offset refusal on the postgres backend (docs/postgres-backend.md §4): BullMQ's PostgreSQL
 * backend stamps a lock with the clock of the process that takes or renews it and judges it with the clock
 * of the process running the stalled check, so a host whose clock is far off would hand running jobs on
 * (its stalled check sees every lock as expired) or have its own handed on. A process whose offset from
 * the database's clock is beyond a tenth of the lock duration therefore takes no job and runs no stalled
 * check until it is back within bounds. The offset is taken as out of bounds only when it is so whatever
 * the sample's round trip hid (|offset| − rtt/2 > limit): a loaded host is not refused for a slow reply.
 *
 * On Redis a lock is a key with a TTL on Redis's own clock, so no host's clock matters: the gate is
 * `undefined` there and nothing changes.
 */
export class ClockOffsetGate {
  private state: ClockOffsetState;

  constructor(readonly limitMs: number) {
    this.state = { refusing: false, offsetMs: 0, rttMs: 0, limitMs };
  }

  /** The gate of a process whose BullMQ locks last `lockDurationMs`; undefined on Redis. */
  static for(store: Pick<Store, 'kind'>, lockDurationMs: number): ClockOffsetGate | undefined {
    return store.kind === 'postgres' ? new ClockOffsetGate(Math.floor(lockDurationMs / 10)) : undefined;
  }

  get current(): ClockOffsetState {
    return this.state;
  }

  /**
   * Takes a measurement; returns the new state when it flips (refusing ↔ not), undefined otherwise.
   * Judged on the round trip of the measurement itself (not ServerClock's narrower kept bounds): a host
   * is refused only when even its most generous reading is too far off.
   */
  observe(sample: Pick<ClockSample, 'offsetMs' | 'rttMs'>): ClockOffsetState | undefined {
    const refusing = Math.abs(sample.offsetMs) - sample.rttMs / 2 > this.limitMs;
    const flipped = refusing !== this.state.refusing;
    this.state = { refusing, offsetMs: sample.offsetMs, rttMs: sample.rttMs, limitMs: this.limitMs };
    return flipped ? this.state : undefined;
  }
}
