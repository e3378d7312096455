import type { ToolCall } from '../api/types.ts';

/** One call on the timeline: its queue wait then its run, as fractions of the shown span. */
export interface TimelineBar {
  call: ToolCall;
  /** Outcome status, or `dispatched` while the call has none. */
  status: string;
  /** Left edge and widths, in % of the timeline's width. */
  left: number;
  waitWidth: number;
  runWidth: number;
  waitMs: number;
  runMs: number | null;
}

export interface TimelineLane {
  server: string;
  bars: TimelineBar[];
}

export interface TimelineLayout {
  startMs: number;
  spanMs: number;
  lanes: TimelineLane[];
}

const ms = (iso: string | null | undefined): number | null => (iso ? Date.parse(iso) : null);

/**
 * Lays a job's calls out: one lane per MCP server (in order of first dispatch), one bar per call from
 * `dispatchedAt` to `startedAt` (waiting in the server's queue) and on to `finishedAt` (running). A call
 * still going is drawn up to `nowMs`. The span starts at the job's creation, so the first bar's offset
 * shows how long the job took to reach its first call.
 */
export function layoutTimeline(calls: ToolCall[], jobCreatedAt: string, nowMs: number): TimelineLayout {
  const startMs = Math.min(Date.parse(jobCreatedAt), ...calls.map((call) => Date.parse(call.dispatchedAt)));
  const ends = calls.map((call) => ms(call.finishedAt) ?? nowMs);
  const endMs = Math.max(startMs + 1, ...ends);
  const spanMs = endMs - startMs;
  const pct = (value: number) => ((value - startMs) / spanMs) * 100;
  const lanes = new Map<string, TimelineBar[]>();
  const ordered = [...calls].sort((a, b) => Date.parse(a.dispatchedAt) - Date.parse(b.dispatchedAt));
  for (const call of ordered) {
    const dispatched = Date.parse(call.dispatchedAt);
    const finished = ms(call.finishedAt);
    // The API learns when a worker started a call from its outcome, so a call without one is drawn
    // as one `dispatched` segment (queued or running, not yet known) up to now; a call that ended
    // without reaching a worker (cancelled while queued) waited until it ended.
    const started = ms(call.startedAt);
    const waitEnd = started ?? finished ?? nowMs;
    const runEnd = started === null ? null : (finished ?? nowMs);
    const status = call.outcome?.status ?? call.status;
    const bar: TimelineBar = {
      call,
      status,
      left: pct(dispatched),
      waitWidth: pct(waitEnd) - pct(dispatched),
      runWidth: runEnd === null || started === null ? 0 : pct(runEnd) - pct(started),
      waitMs: waitEnd - dispatched,
      runMs: runEnd === null || started === null ? null : runEnd - started,
    };
    const server = call.server ?? 'unknown server';
    lanes.set(server, [...(lanes.get(server) ?? []), bar]);
  }
  return { startMs, spanMs, lanes: [...lanes].map(([server, bars]) => ({ server, bars })) };
}
