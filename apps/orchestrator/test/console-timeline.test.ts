import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../console/src/api/types.ts';
import { formatMs } from '../console/src/format.ts';
import { layoutTimeline, type TimelineBar } from '../console/src/timeline/timeline-layout.ts';
import { consoleCacheControl } from '../src/console/console-assets.ts';

const T0 = Date.parse('2026-12-01T02:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

interface Times {
  dispatched: number;
  started?: number;
  finished?: number;
  state?: string;
  attempts?: { pickedUp: number; finished: number; error?: string }[];
  waits?: { kind: 'approval' | 'question'; asked: number; answered?: number }[];
}

function call(id: string, server: string, times: Times) {
  const attempts =
    times.attempts ??
    (times.started !== undefined && times.finished !== undefined
      ? [{ pickedUp: times.started, finished: times.finished }]
      : []);
  const state = times.state ?? (times.finished === undefined ? 'dispatched' : 'ok');
  return {
    id,
    tool: `${server}__tool`,
    server,
    serverTool: 'tool',
    arguments: {},
    state,
    status: state,
    workerId: times.finished === undefined ? null : 'w1',
    dispatchedAt: at(times.dispatched),
    startedAt: times.started === undefined ? null : at(times.started),
    finishedAt: times.finished === undefined ? null : at(times.finished),
    outcome: times.finished === undefined ? null : { status: 'ok', text: 'done', attempts: attempts.length },
    attempts: attempts.map((attempt, index) => ({
      attempt: index + 1,
      workerId: 'w1',
      pickedUpAt: at(attempt.pickedUp),
      startedAt: at(attempt.pickedUp),
      finishedAt: at(attempt.finished),
      error: attempt.error ?? null,
    })),
    waits: (times.waits ?? []).map((wait) => ({
      kind: wait.kind,
      askedAt: at(wait.asked),
      answeredAt: wait.answered === undefined ? null : at(wait.answered),
      expiresAt: at(60_000),
      state: wait.answered === undefined ? 'pending' : 'answered',
    })),
  } as unknown as ToolCall;
}

const kinds = (bar: TimelineBar | undefined) =>
  bar?.segments.map((segment) => [segment.kind, segment.startMs - T0, segment.endMs - T0]);

/** The console's timeline geometry (apps/orchestrator/console/src/timeline): lanes, segments, widths. */
describe('console timeline layout', () => {
  it('puts calls in one lane per server, in order of first dispatch, with queue and attempt segments', () => {
    const layout = layoutTimeline(
      [
        call('b', 'notes', { dispatched: 200, started: 300, finished: 1_000 }),
        call('a', 'search', { dispatched: 0, started: 100, finished: 500 }),
        call('c', 'search', { dispatched: 0, started: 500, finished: 600 }),
      ],
      at(0),
      5_000,
    );
    expect(layout.spanMs).toBe(1_000);
    expect(layout.lanes.map((lane) => [lane.server, lane.bars.map((bar) => bar.call.id)])).toEqual([
      ['search', ['a', 'c']],
      ['notes', ['b']],
    ]);
    const [notes] = layout.lanes[1]?.bars ?? [];
    expect(notes).toMatchObject({ status: 'ok', left: 20, width: 80, waitMs: 100, runMs: 700 });
    expect(notes?.segments.map((segment) => [segment.kind, segment.left, segment.width])).toEqual([
      ['queue', 0, 12.5],
      ['attempt', 12.5, 87.5],
    ]);
    const c = layout.lanes[0]?.bars[1];
    expect(c).toMatchObject({ waitMs: 500, runMs: 100, left: 0, width: 60 });
  });

  it('draws a retried call as queue wait, each attempt and the backoff between them, not as one wait', () => {
    const retried = call('r', 'flaky', {
      dispatched: 0,
      started: 900,
      finished: 1_000,
      attempts: [
        { pickedUp: 100, finished: 600, error: 'timeout' },
        { pickedUp: 900, finished: 1_000 },
      ],
    });
    const bar = layoutTimeline([retried], at(0), 5_000).lanes[0]?.bars[0];
    expect(kinds(bar)).toEqual([
      ['queue', 0, 100],
      ['attempt', 100, 600],
      ['backoff', 600, 900],
      ['attempt', 900, 1_000],
    ]);
    expect(bar?.segments[1]).toMatchObject({ attempt: 1, error: 'timeout' });
    expect(bar).toMatchObject({ waitMs: 100, runMs: 600 });
  });

  it('draws a call awaiting approval as a wait for a person up to now, with no queue wait', () => {
    const gated = call('g', 'teller', {
      dispatched: 0,
      state: 'awaiting_approval',
      waits: [{ kind: 'approval', asked: 100 }],
    });
    const bar = layoutTimeline([gated], at(0), T0 + 2_100).lanes[0]?.bars[0];
    expect(bar?.status).toBe('awaiting_approval');
    expect(kinds(bar)).toEqual([['person', 100, 2_100]]);
    expect(bar).toMatchObject({ waitMs: 0, runMs: null, personMs: 2_000 });
  });

  it('counts the queue wait of an approved call from the approval, not from when it was recorded', () => {
    const approved = call('g', 'teller', {
      dispatched: 0,
      started: 1_600,
      finished: 1_700,
      waits: [{ kind: 'approval', asked: 100, answered: 1_500 }],
    });
    const bar = layoutTimeline([approved], at(0), 5_000).lanes[0]?.bars[0];
    expect(kinds(bar)).toEqual([
      ['person', 100, 1_500],
      ['queue', 1_500, 1_600],
      ['attempt', 1_600, 1_700],
    ]);
  });

  it('draws a call without an outcome as one queue segment up to now, and the span grows with it', () => {
    const layout = layoutTimeline([call('x', 'slow', { dispatched: 100 })], at(0), T0 + 2_100);
    expect(layout.spanMs).toBe(2_100);
    expect(layout.lanes[0]?.bars[0]).toMatchObject({ status: 'dispatched', waitMs: 2_000, runMs: null });
    expect(kinds(layout.lanes[0]?.bars[0])).toEqual([['queue', 100, 2_100]]);
  });

  it('formats durations and chooses cache headers for the page and its hashed assets', () => {
    expect([formatMs(null), formatMs(12.4), formatMs(1_234), formatMs(65_000)]).toEqual([
      '—',
      '12 ms',
      '1.23 s',
      '65.0 s',
    ]);
    expect(consoleCacheControl('/app/dist/console-ui/index.html')).toBe('no-cache');
    expect(consoleCacheControl('/app/dist/console-ui/assets/index-BXFxrpdi.js')).toBe(
      'public, max-age=31536000, immutable',
    );
  });
});
