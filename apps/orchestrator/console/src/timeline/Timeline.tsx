import { useState } from 'react';
import type { CallProgress, ToolCall } from '../api/types.ts';
import { formatMs } from '../format.ts';
import { layoutTimeline, type TimelineBar, type TimelineSegment } from './timeline-layout.ts';

/** Height of one call's row in a lane. */
const ROW_REM = 1.4;

/**
 * The job's tool calls over time: a lane per MCP server, a bar per call with a segment per stretch of
 * its time — queue wait (light), each attempt (solid; a failed one hatched), the backoff between
 * attempts (dotted) and each wait for a person (striped amber) — coloured by the call's state. A call
 * still running whose server reports progress fills its bar by its share done, with the server's
 * message beside it (the newest `tool_call.progress`; its outcome ends the fill). Hovering
 * a bar shows the call's worker, timings and outcome text. Data attributes name lanes, calls, states and
 * segments for tests and tooling.
 */
export function Timeline({
  calls,
  createdAt,
  nowMs,
  progress,
}: {
  calls: ToolCall[];
  createdAt: string;
  nowMs: number;
  /** The newest progress of running calls, by call id. */
  progress?: ReadonlyMap<string, CallProgress>;
}) {
  const [hovered, setHovered] = useState<TimelineBar | null>(null);
  if (calls.length === 0) return <p className="muted">No tool calls yet.</p>;
  const layout = layoutTimeline(calls, createdAt, nowMs);
  return (
    <div className="timeline" data-testid="timeline" data-span-ms={layout.spanMs}>
      {layout.lanes.map((lane) => (
        <div className="lane" key={lane.server} data-testid="timeline-lane" data-server={lane.server}>
          <div className="lane-name" title={lane.server}>
            {lane.server}
          </div>
          {/* One row per call: calls of one server overlap in time (all of a batch wait at once). */}
          <div className="lane-track" style={{ height: `${lane.bars.length * ROW_REM}rem` }}>
            {lane.bars.map((bar, row) => {
              const reported = bar.call.outcome ? undefined : progress?.get(bar.call.id);
              return (
                // biome-ignore lint/a11y/noStaticElementInteractions: hover shows details; the same data is in the calls table below
                <div
                  key={bar.call.id}
                  className={`bar status-${bar.status}`}
                  data-testid="timeline-bar"
                  data-call-id={bar.call.id}
                  data-tool={bar.call.tool}
                  data-status={bar.status}
                  data-worker={bar.call.workerId ?? ''}
                  style={{
                    top: `${row * ROW_REM + 0.2}rem`,
                    left: `${bar.left}%`,
                    width: `${Math.max(bar.width, 0.4)}%`,
                  }}
                  onMouseEnter={() => setHovered(bar)}
                  onMouseLeave={() => setHovered(null)}
                >
                  {bar.segments.map((segment) => (
                    <span
                      key={`${segment.kind}-${segment.startMs}-${segment.attempt ?? ''}`}
                      className={segmentClass(segment, bar.status)}
                      data-testid={`bar-${segment.kind}`}
                      data-attempt={segment.attempt}
                      data-person-kind={segment.personKind}
                      title={segmentTitle(segment)}
                      style={{ left: `${segment.left}%`, width: `${Math.max(segment.width, 0.5)}%` }}
                    />
                  ))}
                  {reported && <ProgressFill progress={reported} />}
                </div>
              );
            })}
            {lane.bars.map((bar, row) => {
              const reported = bar.call.outcome ? undefined : progress?.get(bar.call.id);
              return (
                reported && (
                  <span
                    key={`${bar.call.id}-progress`}
                    className="bar-progress-label"
                    data-testid="bar-progress-label"
                    data-call-id={bar.call.id}
                    style={{
                      top: `${row * ROW_REM + 0.2}rem`,
                      left: `${bar.left}%`,
                    }}
                  >
                    {progressText(reported)}
                  </span>
                )
              );
            })}
          </div>
        </div>
      ))}
      <div className="axis">
        <span>0</span>
        <span>{formatMs(layout.spanMs)}</span>
      </div>
      {hovered && <BarDetails bar={hovered} />}
    </div>
  );
}

/** The share of the call done, when its server says of how much (a progress without total has none). */
function progressShare(progress: CallProgress): number | undefined {
  if (!progress.total || progress.total <= 0) return undefined;
  return Math.min(1, Math.max(0, progress.progress / progress.total));
}

function ProgressFill({ progress }: { progress: CallProgress }) {
  const share = progressShare(progress);
  if (share === undefined) return null;
  return (
    <span
      className="progress-fill"
      data-testid="bar-progress"
      data-share={share}
      style={{ width: `${share * 100}%` }}
    />
  );
}

function progressText(progress: CallProgress): string {
  const share = progressShare(progress);
  const amount = share === undefined ? String(progress.progress) : `${Math.floor(share * 100)}%`;
  return progress.message ? `${amount} ${progress.message}` : amount;
}

function BarDetails({ bar }: { bar: TimelineBar }) {
  const { call } = bar;
  return (
    <div className="bar-details" data-testid="bar-details" role="tooltip">
      <strong>{call.tool}</strong> <span className={`chip status-${bar.status}`}>{bar.status}</span>
      <dl>
        <dt>worker</dt>
        <dd data-testid="bar-details-worker">{call.workerId ?? '—'}</dd>
        <dt>queue wait</dt>
        <dd>{formatMs(bar.waitMs)}</dd>
        <dt>attempts</dt>
        <dd>
          {formatMs(bar.runMs)} in {call.attempts?.length || call.outcome?.attempts || '—'}
        </dd>
        {bar.personMs > 0 && (
          <>
            <dt>waited for a person</dt>
            <dd>{formatMs(bar.personMs)}</dd>
          </>
        )}
        <dt>dispatched</dt>
        <dd>{call.dispatchedAt}</dd>
        <dt>finished</dt>
        <dd>{call.finishedAt ?? '—'}</dd>
      </dl>
      {call.outcome && <pre className="outcome-text">{call.outcome.text.slice(0, 600)}</pre>}
    </div>
  );
}

/** An attempt takes the call's colour (a failed one its own); other stretches look like what they are. */
function segmentClass(segment: TimelineSegment, status: string): string {
  if (segment.kind === 'attempt')
    return segment.error ? 'segment attempt failed' : `segment attempt status-${status}`;
  return `segment ${segment.kind}${segment.personKind ? ` ${segment.personKind}` : ''}`;
}

const SEGMENT_NAMES: Record<TimelineSegment['kind'], string> = {
  queue: 'queue wait',
  attempt: 'attempt',
  backoff: 'retry backoff',
  person: 'waiting for a person',
};

function segmentTitle(segment: TimelineSegment): string {
  const what =
    segment.kind === 'attempt'
      ? `attempt ${segment.attempt ?? ''}${segment.error ? ` (${segment.error})` : ''}`
      : segment.kind === 'person'
        ? segment.personKind === 'approval'
          ? 'awaiting approval'
          : 'awaiting input'
        : SEGMENT_NAMES[segment.kind];
  return `${what}: ${formatMs(segment.endMs - segment.startMs)}`;
}
