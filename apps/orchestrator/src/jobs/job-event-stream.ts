import type { Request, Response } from 'express';
import type { Logger } from '../runtime/logger.ts';
import type { JobEvents } from './job-events.ts';
import { FINAL_STATUSES, type JobStatus } from './job-request.ts';
import type { JobStore } from './job-store.ts';

const KEEPALIVE_MS = 15_000;
/**
 * A job's final status event is written just after the job is marked final. Past this, a final job
 * with nothing left after the client's Last-Event-ID has nothing more to say (the client has seen the
 * end, sent an id past it, or the event was lost), and the stream closes.
 */
const FINAL_EVENT_GRACE_MS = 2_000;

/**
 * Streams a job's events as server-sent events: first what is stored after `Last-Event-ID`, then each
 * new event as it is announced. The stream ends after the job's final status.
 */
export async function streamJobEvents(
  jobId: string,
  lastEventId: number,
  deps: { store: JobStore; events: JobEvents; log: Logger },
  request: Request,
  response: Response,
): Promise<void> {
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
  let last = lastEventId;
  let closed = false;
  let draining: Promise<void> = Promise.resolve();
  let recheck: NodeJS.Timeout | undefined;

  const close = () => {
    if (closed) return;
    closed = true;
    unwatch();
    clearInterval(keepalive);
    clearTimeout(recheck);
    response.end();
  };
  /** Just after the job ended: is its final status event stored, and not after what the client has? */
  const finalEventAtOrBefore = async (id: number) => {
    const final = (await deps.store.eventsAfter(jobId, 0)).find(
      (event) => event.type === 'status' && FINAL_STATUSES.has(event.data.status as JobStatus),
    );
    return final !== undefined && final.id <= id;
  };
  /** Nothing new after `last`: close if the job is over, else wait for the next announcement. */
  const closeIfOver = async () => {
    const job = await deps.store.get(jobId);
    if (!job || !FINAL_STATUSES.has(job.status)) return;
    const sinceFinish = Date.now() - (job.finishedAt?.getTime() ?? 0);
    if (sinceFinish >= FINAL_EVENT_GRACE_MS || (await finalEventAtOrBefore(last))) close();
    else
      recheck ??= setTimeout(() => {
        recheck = undefined;
        schedule();
      }, FINAL_EVENT_GRACE_MS - sinceFinish);
  };
  const drain = async () => {
    while (!closed) {
      const batch = await deps.store.eventsAfter(jobId, last);
      for (const event of batch) {
        response.write(
          `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify({ ...event.data, at: event.at })}\n\n`,
        );
        last = event.id;
        if (event.type === 'status' && FINAL_STATUSES.has(event.data.status as JobStatus)) {
          close();
          return;
        }
      }
      if (batch.length === 0) {
        await closeIfOver();
        return;
      }
    }
  };
  // Drains run one after another, so events are written once and in order.
  const schedule = () => {
    draining = draining.then(drain).catch((error: unknown) => {
      deps.log.warn({ job_id: jobId, err: error }, 'event stream failed; closing it');
      close();
    });
  };
  const unwatch = deps.events.watch(jobId, schedule);
  const keepalive = setInterval(() => {
    response.write(': keep-alive\n\n');
    schedule();
  }, KEEPALIVE_MS);
  request.on('close', close);
  schedule();
  await draining;
}
