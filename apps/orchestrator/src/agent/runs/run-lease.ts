import type { Job } from 'bullmq';

import { LeaseLostError, type RunLease, raceSignal } from '../../tool-calls/call-lease.ts';

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
