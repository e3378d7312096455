import type { Job } from 'bullmq';

/**
 * Why a running call was aborted: it decides whether an outcome may be recorded at all. `lock_lost`:
 * the job is another worker's now; `unreachable`: Redis was silent for a lock duration, so the job may be
 * (a partition) or may still be ours (Redis itself paused) — asked again once Redis answers; `cancelled`:
 * an explicit cancel or the job's deadline.
 */
export class CallAbort extends Error {
  constructor(
    readonly kind: 'lock_lost' | 'unreachable' | 'cancelled',
    message: string,
  ) {
    super(message);
    this.name = 'CallAbort';
  }
}

export interface InFlightCall {
  job: Job;
  token: string;
  controller: AbortController;
}

/** A cancel for a call not (yet) running here is kept this long, for a pickup that races the request. */
const EARLY_CANCEL_TTL_MS = 60_000;

/**
 * The calls one consumer is running, by BullMQ job id, each with the AbortController its MCP request
 * listens to (the SDK sends notifications/cancelled when it fires).
 */
export class InFlightCalls {
  private readonly calls = new Map<string, InFlightCall>();
  private readonly earlyCancels = new Map<string, { reason: string; at: number }>();

  register(job: Job, token: string): InFlightCall {
    const id = String(job.id);
    const call = { job, token, controller: new AbortController() };
    this.calls.set(id, call);
    const early = this.earlyCancels.get(id);
    if (early) {
      this.earlyCancels.delete(id);
      call.controller.abort(new CallAbort('cancelled', early.reason));
    }
    return call;
  }

  release(job: Job, call: InFlightCall): void {
    const id = String(job.id);
    if (this.calls.get(id) === call) this.calls.delete(id);
  }

  get(id: string): InFlightCall | undefined {
    return this.calls.get(id);
  }

  abort(id: string, reason: CallAbort): boolean {
    const call = this.calls.get(id);
    if (!call) return false;
    call.controller.abort(reason);
    return true;
  }

  /** Aborts every call running here (the store unreachable past the lock: lock-watchdog.ts); returns their ids. */
  abortAll(reason: CallAbort): string[] {
    const ids = [...this.calls.keys()];
    for (const id of ids) this.abort(id, reason);
    return ids;
  }

  /** Aborts the call if it runs here; otherwise remembers the cancel for a moment (see EARLY_CANCEL_TTL_MS). */
  cancel(id: string, reason: string): boolean {
    if (this.abort(id, new CallAbort('cancelled', reason))) return true;
    const now = Date.now();
    for (const [key, entry] of this.earlyCancels) {
      if (now - entry.at > EARLY_CANCEL_TTL_MS) this.earlyCancels.delete(key);
    }
    this.earlyCancels.set(id, { reason, at: now });
    return false;
  }

  get size(): number {
    return this.calls.size;
  }
}
