/**
 * Notices that this worker has lost contact with the store its job locks live in (Redis or PostgreSQL),
 * and that it may therefore have lost them, while it cannot ask the store. Commands on a partitioned
 * connection hang (there is no command timeout: BullMQ's moveToCompleted must wait for the store to hold
 * a finished result, docs/semantics.md §4; node-postgres has no statement timeout either), so a lock
 * renewal never returns, BullMQ never reports 'lockRenewalFailed', and the worker would learn of a lost
 * lock only when the link heals. Meanwhile the job went to another worker once the lock expired:
 * on a `concurrency: 1` server the two calls overlap for as long as the partition lasts.
 *
 * So every `lockDurationMs / 6` the watchdog sends a cheap probe on the same route that renews the locks
 * (lock-watchdog-probe.ts; one at a time: on a dark link they would only pile up), and remembers when the
 * last answered probe was *sent*: the store was reachable at or after that moment. When `lockDurationMs` has
 * passed since then, no renewal can have reached the store in a lock's lifetime, so the locks must be taken
 * as lost (`onLost`); the first probe answered after that ends it (`onRestored`). Durations are on the
 * monotonic clock: a wall-clock step must not look like a partition.
 */
export interface LockWatchdogOptions {
  /**
   * Resolves when the store answered (lock-watchdog-probe.ts); a rejection is no answer, except a Redis
   * error reply. On a Cluster it must reach the node holding the locks.
   */
  probe: () => Promise<unknown>;
  lockDurationMs: number;
  onLost: (silentMs: number) => void;
  onRestored: (silentMs: number) => void;
  /** Monotonic ms (default performance.now); injected by tests. */
  monotonic?: () => number;
}

/** What the watchdog concludes at `now` from the send time of the last answered probe. */
export function contactVerdict(lastContactAt: number, now: number, lockDurationMs: number): 'ok' | 'lost' {
  return now - lastContactAt >= lockDurationMs ? 'lost' : 'ok';
}

/**
 * A tick this much later than planned means this process did not run (SIGSTOP, VM pause, starved CPU):
 * the silence was its own, not the store's; the count restarts and a fresh probe decides. A frozen worker's
 * lock is handled where it wakes (the lock renewal's answer, and the hold before an outcome).
 */
const LATE_TICK_FACTOR = 3;

/** A probe unanswered this many lock durations is forgotten, so a new one may go out (a lost reply). */
const FORGOTTEN_PROBE_LOCKS = 2;

export class LockWatchdog {
  private readonly monotonic: () => number;
  private readonly everyMs: number;
  private lastContactAt = 0;
  private lastTickAt = 0;
  private inFlight: number | undefined;
  private lost = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LockWatchdogOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.everyMs = Math.max(50, Math.floor(options.lockDurationMs / 6));
  }

  get isLost(): boolean {
    return this.lost;
  }

  start(): void {
    if (this.timer) return;
    this.lastContactAt = this.lastTickAt = this.monotonic();
    this.timer = setInterval(() => this.tick(), this.everyMs);
    this.timer.unref();
    this.tick();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: judge the silence so far, then probe unless a probe is still out. Public for tests. */
  tick(): void {
    const now = this.monotonic();
    if (now - this.lastTickAt > this.everyMs * LATE_TICK_FACTOR) {
      this.lastContactAt = Math.max(this.lastContactAt, now - this.everyMs);
      this.inFlight = undefined;
    }
    this.lastTickAt = now;
    this.judge(now);
    if (
      this.inFlight !== undefined &&
      now - this.inFlight < this.options.lockDurationMs * FORGOTTEN_PROBE_LOCKS
    ) {
      return;
    }
    const sentAt = now;
    this.inFlight = sentAt;
    this.options.probe().then(
      () => this.answered(sentAt),
      // An error reply is an answer too (the store is there); a connection error is not, but then the
      // client reconnects and the next probe tells.
      (error: unknown) => (isReply(error) ? this.answered(sentAt) : this.forget(sentAt)),
    );
  }

  private answered(sentAt: number): void {
    if (this.inFlight === sentAt) this.inFlight = undefined;
    this.lastContactAt = Math.max(this.lastContactAt, sentAt);
    this.judge(this.monotonic());
  }

  private forget(sentAt: number): void {
    if (this.inFlight === sentAt) this.inFlight = undefined;
  }

  private judge(now: number): void {
    const verdict = contactVerdict(this.lastContactAt, now, this.options.lockDurationMs);
    const silentMs = Math.round(now - this.lastContactAt);
    if (verdict === 'lost' && !this.lost) {
      this.lost = true;
      this.options.onLost(silentMs);
    } else if (verdict === 'ok' && this.lost) {
      this.lost = false;
      this.options.onRestored(silentMs);
    }
  }
}

/** ioredis rejects with a ReplyError when Redis answered with an error. */
function isReply(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
