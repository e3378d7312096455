/**
 * The hold a call's caller has on the work the call belongs to (an agent or batch run, a /mcp request):
 * checked before every dispatch and outcome, so only the holder records a call (docs/semantics.md §6).
 */

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

/** A replica's hold on one run (or one /mcp request): checked before every model step, dispatch, checkpoint and outcome. */
export interface RunLease {
  /** Aborts once this replica is known to have lost the run. */
  readonly signal: AbortSignal;
  /** Throws LeaseLostError when the run is already known lost (no round trip to the queue store). */
  assertHeld(): void;
  /**
   * Asks the queue store whether the lock is still ours, extending it (BullMQ's own extendLock script, which
   * succeeds only for the current token), or takes back one that merely expired while nobody took the
   * run. Throws LeaseLostError when it is not ours.
   */
  confirm(): Promise<void>;
  /**
   * As confirm(), without the round trip while an extension this replica saw succeed still covers now:
   * before an outcome is written after work that may have outlasted the lock (a dispatch).
   */
  confirmUnlessFresh(): Promise<void>;
  /**
   * The run ended on this replica (its final status is written): nobody can take it over any more, so the
   * late outcomes of calls it left running (a deadline, a cancel) are recorded here without asking.
   */
  ended(): void;
  /** `work`'s result, or LeaseLostError as soon as the run is lost (the work itself goes on). */
  race<T>(work: Promise<T>): Promise<T>;
}

/** A run not consumed from a queue (tests, tools): nobody else can hold it. */
export const UNCONTESTED_LEASE: RunLease = {
  signal: new AbortController().signal,
  assertHeld: () => undefined,
  confirm: async () => undefined,
  confirmUnlessFresh: async () => undefined,
  ended: () => undefined,
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
