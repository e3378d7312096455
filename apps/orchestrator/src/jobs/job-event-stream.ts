import type { Request, Response } from 'express';
import type { Logger } from '../runtime/logger.ts';
import { streamEnd } from './event-stream-end.ts';
import type { JobEvents } from './job-events.ts';
import { FINAL_STATUSES, type JobStatus } from './job-request.ts';
import { EVENT_PAGE_SIZE, type JobStore } from './job-store.ts';

const KEEPALIVE_MS = 15_000;

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
  let askedOnConnect = false;

  const close = () => {
    if (closed) return;
    closed = true;
    unwatch();
    clearInterval(keepalive);
    clearTimeout(recheck);
    response.end();
  };
  /** Nothing new after `last`: close if the job is over, else wait for the next announcement. */
  const closeIfOver = async () => {
    const end = await streamEnd(deps.store, jobId, last);
    if (end === 'over') close();
    else if (typeof end === 'number')
      recheck ??= setTimeout(() => {
        recheck = undefined;
        schedule();
      }, end);
  };
  const drain = async () => {
    let wrote = false;
    while (!closed) {
      const batch = await deps.store.eventsAfter(jobId, last);
      wrote ||= batch.length > 0;
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
      if (batch.length < EVENT_PAGE_SIZE) {
        // Live, a job ends with its final status event (which closed the stream above). Only a drain that
        // found nothing, or the first one (the job may have ended before this client connected), asks.
        if (!wrote || !askedOnConnect) await closeIfOver();
        askedOnConnect = true;
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
