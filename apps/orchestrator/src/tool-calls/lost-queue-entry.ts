/**
 * What to do with a call PostgreSQL shows `dispatched` (not settled) whose queue job does not exist,
 * now that a run dispatches it again (docs/semantics.md §18):
 * - `add`: the job provably never reached Redis — the call's recorded epoch is the slot's epoch now,
 *   so an add that had happened would still be there (the run stopped before its add) — or the call
 *   is idempotent and may run again: dispatch it under its deterministic id;
 * - `indeterminate`: Redis lost its data since the call was recorded (another epoch, or none recorded),
 *   so the job may have run; a non-idempotent call is not added again and ends `indeterminate`,
 *   executed `unknown`.
 */
export type LostEntryDecision = 'add' | 'indeterminate';

export function lostEntryDecision(call: {
  recordedEpoch: string | null;
  currentEpoch: string;
  idempotent: boolean;
}): LostEntryDecision {
  if (neverQueued(call.recordedEpoch, call.currentEpoch)) return 'add';
  return call.idempotent ? 'add' : 'indeterminate';
}

/**
 * A call recorded `dispatched` whose queue job is missing provably never reached Redis when it was
 * recorded under the slot's epoch of now: an add that had happened would still be there.
 */
export function neverQueued(recordedEpoch: string | null, currentEpoch: string): boolean {
  return recordedEpoch !== null && recordedEpoch === currentEpoch;
}

/** The model's text when a call's queue entry was lost with Redis's data. */
export function lostEntryText(server: string, tool: string): string {
  return `Redis lost the queue entry of this call to ${server}__${tool} (its data was lost after the call was queued), so it may or may not have run; it was not run again.`;
}

export const LOST_ENTRY_ERROR = 'redis_data_lost';
