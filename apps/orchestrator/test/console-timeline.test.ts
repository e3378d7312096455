import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../console/src/api/types.ts';
import { formatMs } from '../console/src/format.ts';
import { layoutTimeline } from '../console/src/timeline/timeline-layout.ts';
import { consoleCacheControl } from '../src/console/console-assets.ts';

const T0 = Date.parse('2026-12-01T02:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function call(
  id: string,
  server: string,
  times: { dispatched: number; started?: number; finished?: number },
) {
  return {
    id,
    tool: `${server}__tool`,
    server,
    serverTool: 'tool',
    arguments: {},
    status: times.finished === undefined ? 'dispatched' : 'ok',
    workerId: times.finished === undefined ? null : 'w1',
    dispatchedAt: at(times.dispatched),
    startedAt: times.started === undefined ? null : at(times.started),
    finishedAt: times.finished === undefined ? null : at(times.finished),
    outcome: times.finished === undefined ? null : { status: 'ok', text: 'done', attempts: 1 },
  } as unknown as ToolCall;
}

/** The console's timeline geometry (apps/orchestrator/console/src/timeline): lanes, segments, widths. */
describe('console timeline layout', () => {
  it('puts calls in one lane per server, in order of first dispatch, with wait and run segments', () => {
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
    expect(notes).toMatchObject({
      status: 'ok',
      left: 20,
      waitWidth: 10,
      runWidth: 70,
      waitMs: 100,
      runMs: 700,
    });
    const c = layout.lanes[0]?.bars[1];
    expect(c).toMatchObject({ waitMs: 500, runMs: 100, waitWidth: 50, runWidth: 10 });
  });

  it('draws a call without an outcome as one dispatched segment up to now, and the span grows with it', () => {
    const layout = layoutTimeline([call('x', 'slow', { dispatched: 100 })], at(0), T0 + 2_100);
    expect(layout.spanMs).toBe(2_100);
    expect(layout.lanes[0]?.bars[0]).toMatchObject({
      status: 'dispatched',
      waitMs: 2_000,
      runMs: null,
      runWidth: 0,
    });
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
