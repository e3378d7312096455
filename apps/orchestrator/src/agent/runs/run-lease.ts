import type { Job } from 'bullmq';

/**
 * This replica no longer holds the run's BullMQ lock: another replica may be running it. Thrown
 * instead of writing anything for the job, so the holder of the lock alone settles and records it.
 */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';

  constructor(readonly jobId: string) {
    super(`lost the lock of run ${jobId}; the replica holding it now continues the run`);
  }
}

/** A replica's hold on one run: checked before every model step, dispatch, checkpoint and outcome. */
export interface RunLease {
  /** Aborts once this replica is known to have lost the run. */
  readonly signal: AbortSignal;
  /** Throws LeaseLostError when the run is already known lost (no Redis round trip). */
  assertHeld(): void;
  /**
   * Asks Redis whether the lock is still ours, extending it (BullMQ's own extendLock script, which
   * succeeds only for the current token), or takes back one that merely expired while nobody took the
   * run. Throws LeaseLostError when it is not ours.
   */
  confirm(): Promise<void>;
  /** `work`'s result, or LeaseLostError as soon as the run is lost (the work itself goes on). */
  race<T>(work: Promise<T>): Promise<T>;
}

/** The lease of a run consumed from the `agent-runs` queue, fenced by the job's lock token. */
export class BullRunLease implements RunLease {
  private readonly lost = new AbortController();
  readonly signal: AbortSignal;

  constructor(
    private readonly job: Job,
    private readonly token: string | undefined,
    private readonly lockDurationMs: number,
    /** BullMQ's processor signal, aborted when the lock is known lost. */
    bullSignal: AbortSignal | undefined,
    private readonly onRedisError: (error: unknown) => void = () => undefined,
    /** Takes back a lock that merely expired, if nobody took the run since; true when held again. */
    private readonly takeBack: () => Promise<boolean> = async () => false,
  ) {
    this.signal = bullSignal ? AbortSignal.any([this.lost.signal, bullSignal]) : this.lost.signal;
  }

  assertHeld(): void {
    if (this.signal.aborted) throw new LeaseLostError(String(this.job.id));
  }

  async confirm(): Promise<void> {
    this.assertHeld();
    if (!this.token) return;
    let extended: number;
    try {
      extended = await this.job.extendLock(this.token, this.lockDurationMs);
    } catch (error) {
      // Redis unreachable: nobody can take the run over while it is, and BullMQ's lock renewal
      // reports the loss once it answers again. Carry on rather than fail the run for a blip.
      this.onRedisError(error);
      this.assertHeld();
      return;
    }
    if (extended !== 1 && !(await this.takeBack())) this.lost.abort(new LeaseLostError(String(this.job.id)));
    this.assertHeld();
  }

  race<T>(work: Promise<T>): Promise<T> {
    return raceSignal(work, this.signal, () => new LeaseLostError(String(this.job.id)));
  }
}

/** A run not consumed from a queue (tests, tools): nobody else can hold it. */
export const UNCONTESTED_LEASE: RunLease = {
  signal: new AbortController().signal,
  assertHeld: () => undefined,
  confirm: async () => undefined,
  race: (work) => work,
};

/**
 * `work`'s result, or `error()` as soon as `signal` aborts, whichever comes first. `work` is always
 * handled, also when the signal had already aborted: a run stopped by a hand-over leaves calls in flight
 * whose lease checks reject later, and an unhandled rejection would end the process.
 */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal, error: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(error());
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (reason: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(reason);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
