import type { ToolCall } from '../api/types.ts';

/**
 * What a stretch of a call's time went on, drawn differently each: waiting on its server's queue,
 * an attempt a worker made (sent to the server, or failed before it was), the retry backoff between
 * two attempts, and a wait for a person (an approval before it is sent, or the answer to a question).
 */
export type SegmentKind = 'queue' | 'attempt' | 'backoff' | 'person';

export interface TimelineSegment {
  kind: SegmentKind;
  startMs: number;
  endMs: number;
  /** Left edge and width in % of the bar. */
  left: number;
  width: number;
  /** Attempts: their number and, for one that failed, why; waits: approval or question. */
  attempt?: number;
  error?: string | null;
  personKind?: 'approval' | 'question';
}

/** One call on the timeline: its segments, placed as fractions of the shown span. */
export interface TimelineBar {
  call: ToolCall;
  /** The call's state: `awaiting_approval`, `awaiting_input`, `dispatched`, or its outcome status. */
  status: string;
  /** Left edge and width, in % of the timeline's width. */
  left: number;
  width: number;
  segments: TimelineSegment[];
  /** Time on the server's queue, in attempts, and waiting for people (ms). */
  waitMs: number;
  runMs: number | null;
  personMs: number;
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

type Stretch = Omit<TimelineSegment, 'left' | 'width'>;

/**
 * A call's stretches of time. Waits for a person come from `waits`; the attempts from `attempts`
 * (the gaps between them are backoff); the queue wait runs from when the call was put on the queue
 * (after any approval) to the first attempt. A call whose outcome has not come yet shows one queue
 * stretch up to now (the API learns of attempts with the outcome), unless it waits for a person.
 */
function stretches(call: ToolCall, nowMs: number): Stretch[] {
  const out: Stretch[] = [];
  const finished = ms(call.finishedAt);
  for (const wait of call.waits ?? []) {
    const asked = Date.parse(wait.askedAt);
    const end =
      ms(wait.answeredAt) ??
      (wait.state === 'pending' ? nowMs : Math.min(Date.parse(wait.expiresAt), finished ?? nowMs));
    out.push({ kind: 'person', startMs: asked, endMs: Math.max(end, asked), personKind: wait.kind });
  }
  const attempts = call.attempts ?? [];
  attempts.forEach((attempt, index) => {
    const start = Date.parse(attempt.pickedUpAt);
    const previous = attempts[index - 1];
    if (previous && Date.parse(previous.finishedAt) < start)
      out.push({ kind: 'backoff', startMs: Date.parse(previous.finishedAt), endMs: start });
    out.push({
      kind: 'attempt',
      startMs: start,
      endMs: Math.max(Date.parse(attempt.finishedAt), start),
      attempt: attempt.attempt,
      error: attempt.error,
    });
  });
  const waiting = call.state === 'awaiting_approval' || call.state === 'awaiting_input';
  if (!waiting) {
    const firstTry = attempts[0]
      ? Date.parse(attempts[0].pickedUpAt)
      : (ms(call.startedAt) ?? finished ?? nowMs);
    // Put on the queue once the person answered (servers that record the call before its approval
    // date dispatchedAt earlier): the time before is the person's, not the queue's.
    const answered = out
      .filter((stretch) => stretch.kind === 'person' && stretch.endMs <= firstTry)
      .map((stretch) => stretch.endMs);
    const queued = Math.max(Date.parse(call.dispatchedAt), ...answered);
    if (queued <= firstTry) out.push({ kind: 'queue', startMs: queued, endMs: firstTry });
    // An outcome without attempts that ran (an old row with only startedAt): its run as one attempt.
    if (attempts.length === 0 && ms(call.startedAt) !== null)
      out.push({
        kind: 'attempt',
        startMs: firstTry,
        endMs: Math.max(finished ?? nowMs, firstTry),
        attempt: 1,
      });
  }
  return out.sort((a, b) => a.startMs - b.startMs);
}

const total = (list: Stretch[], kind: SegmentKind) =>
  list
    .filter((stretch) => stretch.kind === kind)
    .reduce((sum, stretch) => sum + stretch.endMs - stretch.startMs, 0);

/**
 * Lays a job's calls out: one lane per MCP server (in order of first dispatch), one bar per call
 * spanning its stretches (see stretches). A call still going is drawn up to `nowMs`. The span starts
 * at the job's creation, so the first bar's offset shows how long the job took to reach its first call.
 */
export function layoutTimeline(calls: ToolCall[], jobCreatedAt: string, nowMs: number): TimelineLayout {
  const perCall = calls.map((call) => ({ call, stretches: stretches(call, nowMs) }));
  const starts = perCall.flatMap(({ call, stretches }) => [
    Date.parse(call.dispatchedAt),
    ...stretches.map((stretch) => stretch.startMs),
  ]);
  const startMs = Math.min(Date.parse(jobCreatedAt), ...starts);
  const ends = perCall.flatMap(({ call, stretches }) => [
    ms(call.finishedAt) ?? nowMs,
    ...stretches.map((stretch) => stretch.endMs),
  ]);
  const endMs = Math.max(startMs + 1, ...ends);
  const spanMs = endMs - startMs;
  const pct = (value: number) => ((value - startMs) / spanMs) * 100;
  const lanes = new Map<string, TimelineBar[]>();
  const firstAt = ({ call, stretches }: (typeof perCall)[number]) =>
    Math.min(Date.parse(call.dispatchedAt), ...stretches.map((stretch) => stretch.startMs));
  const ordered = [...perCall].sort((a, b) => firstAt(a) - firstAt(b));
  for (const entry of ordered) {
    const { call } = entry;
    const barStart = entry.stretches[0]?.startMs ?? Date.parse(call.dispatchedAt);
    const barEnd = Math.max(barStart, ...entry.stretches.map((stretch) => stretch.endMs));
    const barMs = Math.max(barEnd - barStart, 1);
    const attempts = entry.stretches.some((stretch) => stretch.kind === 'attempt');
    const bar: TimelineBar = {
      call,
      status: call.state ?? call.outcome?.status ?? call.status,
      left: pct(barStart),
      width: pct(barEnd) - pct(barStart),
      segments: entry.stretches.map((stretch) => ({
        ...stretch,
        left: ((stretch.startMs - barStart) / barMs) * 100,
        width: ((stretch.endMs - stretch.startMs) / barMs) * 100,
      })),
      waitMs: total(entry.stretches, 'queue'),
      runMs: attempts ? total(entry.stretches, 'attempt') : null,
      personMs: total(entry.stretches, 'person'),
    };
    const server = call.server ?? 'unknown server';
    lanes.set(server, [...(lanes.get(server) ?? []), bar]);
  }
  return { startMs, spanMs, lanes: [...lanes].map(([server, bars]) => ({ server, bars })) };
}
