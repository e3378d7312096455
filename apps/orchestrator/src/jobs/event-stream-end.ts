import { FINAL_STATUSES } from './job-request.ts';
import type { JobStore } from './job-store.ts';

/**
 * A job's final status event is stored with its status (JobStore.finish), but the announcement over
 * Redis follows the write, and a cancelled job's last calls report after it: a stream waits this long
 * before it takes silence for the end.
 */
export const FINAL_EVENT_GRACE_MS = 2_000;

/**
 * Whether a stream that has nothing after `lastEventId` is done: `over` for a job that has ended and
 * has nothing more to announce, `wait` while more may come, or the ms after which to ask again.
 * A Last-Event-ID past the job's newest event (a client's garbage, or one from another job) ends the
 * stream of a finished job at once; a cancelled job's running calls still announce their outcomes.
 */
export async function streamEnd(
  store: JobStore,
  jobId: string,
  lastEventId: number,
): Promise<'over' | 'wait' | number> {
  const job = await store.get(jobId);
  if (!job || !FINAL_STATUSES.has(job.status)) return job ? 'wait' : 'over';
  if (lastEventId > (await store.newestEventId(jobId))) return 'over';
  if ((await store.toolCalls(jobId)).some((call) => !call.outcome)) return 'wait';
  const sinceFinish = Date.now() - (job.finishedAt?.getTime() ?? 0);
  return sinceFinish >= FINAL_EVENT_GRACE_MS ? 'over' : FINAL_EVENT_GRACE_MS - sinceFinish;
}
