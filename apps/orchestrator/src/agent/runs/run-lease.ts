import type { Job } from 'bullmq';

import { LeaseLostError, type RunLease, raceSignal } from '../../tool-calls/call-lease.ts';

/** The lease of a run consumed from the `agent-runs` queue, fenced by the job's lock token. */
export class BullRunLease implements RunLease {
  private readonly lost = new AbortController();
  readonly signal: AbortSignal;
  /**
   * Until when an extension this replica saw succeed keeps the run ours (asked at + lock duration): before
   * it no other replica can have taken the run, after it only the queue store can say.
   */
  private heldUntil = 0;
  private endedHere = false;

  constructor(
    private readonly job: Job,
    private readonly token: string | undefined,
    private readonly lockDurationMs: number,
    /** BullMQ's processor signal, aborted when the lock is known lost. */
    bullSignal: AbortSignal | undefined,
    private readonly onStoreError: (error: unknown) => void = () => undefined,
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
    const askedAt = Date.now();
    let extended: number;
    try {
      extended = await this.job.extendLock(this.token, this.lockDurationMs);
    } catch (error) {
      this.onStoreError(error);
      // Unanswered: a blip is carried through while the last extension seen still covers now. Past it the
      // run may be another replica's — the store may be out of reach of this replica only (a full pool, a
      // cut link), not of the others — so it is given up here rather than written for twice.
      if (Date.now() >= this.heldUntil) this.lost.abort(new LeaseLostError(String(this.job.id)));
      this.assertHeld();
      return;
    }
    if (extended === 1 || (await this.takeBack())) this.heldUntil = askedAt + this.lockDurationMs;
    else this.lost.abort(new LeaseLostError(String(this.job.id)));
    this.assertHeld();
  }

  async confirmUnlessFresh(): Promise<void> {
    this.assertHeld();
    // Once ended here the queue job is finished and its lock gone: asking would read as a lost run.
    if (this.endedHere || Date.now() < this.heldUntil) return;
    await this.confirm();
  }

  ended(): void {
    this.endedHere = true;
  }

  race<T>(work: Promise<T>): Promise<T> {
    return raceSignal(work, this.signal, () => new LeaseLostError(String(this.job.id)));
  }
}
