import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { switchyard } from '../api/switchyard.ts';
import { type CallProgress, FINAL_JOB_STATUSES, type Job } from '../api/types.ts';

/**
 * The job view, kept current while the job runs: every event of its SSE stream (a call dispatched or
 * finished, a status, a message, a question) re-reads `GET /v1/jobs/:id`, so the page always shows the
 * API's own view rather than a copy rebuilt from events. Progress events are the exception: they
 * are not in the view, so the newest per call is kept here (`progress`, by call id) without a re-read.
 * `nowMs` ticks while the job runs so that bars of calls still going grow.
 */
export function useLiveJob(id: string) {
  const client = useQueryClient();
  const job = useQuery({
    queryKey: ['job', id],
    queryFn: (): Promise<Job> => switchyard().getJob(id),
  });
  const ended = job.data ? FINAL_JOB_STATUSES.has(job.data.status) : false;
  const running = job.data !== undefined && !ended;
  const [nowMs, setNowMs] = useState(() => Date.now());
  const [live, setLive] = useState(false);
  const [progress, setProgress] = useState<ReadonlyMap<string, CallProgress>>(() => new Map());

  useEffect(() => {
    if (!running) return;
    const controller = new AbortController();
    setLive(true);
    // The client's follower reads the stream with fetch (EventSource cannot send the key) and
    // resumes a dropped stream with Last-Event-ID.
    (async () => {
      for await (const event of switchyard().followJob(id, { signal: controller.signal })) {
        if (event.event === 'tool_call.progress') {
          const call = event.data;
          setProgress((known) => new Map(known).set(call.toolCallId, call));
        } else void client.invalidateQueries({ queryKey: ['job', id] });
      }
    })()
      .catch((error: unknown) => {
        if (!controller.signal.aborted) console.warn('job events ended', error);
      })
      .finally(() => {
        setLive(false);
        void client.invalidateQueries({ queryKey: ['job', id] });
      });
    const tick = setInterval(() => setNowMs(Date.now()), 250);
    return () => {
      controller.abort();
      clearInterval(tick);
    };
    // Follows once per job while it runs: re-reads of the view do not restart the stream.
  }, [id, running, client]);

  return {
    job,
    live,
    progress,
    nowMs: ended && job.data?.finishedAt ? Date.parse(job.data.finishedAt) : nowMs,
  };
}
