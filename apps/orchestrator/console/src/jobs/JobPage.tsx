import { Link, useParams } from 'react-router';
import { useIsOperator } from '../auth/viewer-context.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { formatDuration, formatMs, jobDuration } from '../format.ts';
import { InputAudit } from '../inputs/InputAudit.tsx';
import { PendingInputs } from '../inputs/PendingInputs.tsx';
import { StatusChip } from '../StatusChip.tsx';
import { Timeline } from '../timeline/Timeline.tsx';
import { CallAttempts } from './CallAttempts.tsx';
import { JobActions } from './JobActions.tsx';
import { JobMessages } from './JobMessages.tsx';
import { useLiveJob } from './use-live-job.ts';

/** One job: its state, the timeline of its calls (live while it runs), questions to answer, messages, result. */
export function JobPage() {
  const { id = '' } = useParams();
  const operator = useIsOperator();
  const { job, live, progress, nowMs } = useLiveJob(id);
  if (job.error) return <ErrorNote error={job.error} />;
  if (!job.data) return <p className="muted">Loading…</p>;
  const view = job.data;
  const duration = jobDuration(view, nowMs);
  return (
    <section data-testid="job-page" data-job-id={view.id} data-status={view.status}>
      <p>
        <Link to="/">← Jobs</Link>
      </p>
      <h1>
        {view.kind} job <code>{view.id}</code> <StatusChip status={view.status} />
        {live && (
          <span className="live" data-testid="live">
            ● live
          </span>
        )}
      </h1>
      {!operator && <JobActions job={view} />}
      <dl className="facts">
        <dt>team</dt>
        <dd data-testid="job-team">{view.team}</dd>
        <dt>created</dt>
        <dd>{view.createdAt}</dd>
        <dt>started</dt>
        <dd>{view.startedAt ?? '—'}</dd>
        <dt>finished</dt>
        <dd>{view.finishedAt ?? '—'}</dd>
        <dt>duration</dt>
        <dd data-testid="job-duration">
          {duration ? `${duration.running ? 'running for ' : ''}${formatDuration(duration.ms)}` : '—'}
        </dd>
        <dt>trace</dt>
        <dd>
          {view.traceUrl ? (
            <a href={view.traceUrl} target="_blank" rel="noreferrer" data-testid="trace-link">
              {view.traceId}
            </a>
          ) : (
            <code>{view.traceId}</code>
          )}
        </dd>
        {Object.keys(view.metadata).length > 0 && (
          <>
            <dt>metadata</dt>
            <dd>
              {Object.entries(view.metadata)
                .map(([key, value]) => `${key}=${value}`)
                .join(' ')}
            </dd>
          </>
        )}
        {view.summary && (
          <>
            <dt>calls</dt>
            <dd data-testid="batch-summary">
              {view.summary.calls} ({view.summary.pending} pending)
              {Object.entries(view.summary.byStatus).map(([status, count]) => (
                <span key={status}>
                  {' '}
                  <StatusChip status={status} /> {count}
                </span>
              ))}
            </dd>
          </>
        )}
      </dl>
      {view.error && <p className="error">{view.error}</p>}
      {view.pendingInputs && view.pendingInputs.length > 0 && (
        <PendingInputs jobId={view.id} team={view.team} inputs={view.pendingInputs} readOnly={operator} />
      )}
      <h2>Timeline</h2>
      <Legend />
      <Timeline calls={view.toolCalls} createdAt={view.createdAt} nowMs={nowMs} progress={progress} />
      <h2>Calls</h2>
      <table className="grid" data-testid="call-table">
        <thead>
          <tr>
            <th>call</th>
            <th>tool</th>
            <th>state</th>
            <th>worker</th>
            <th>wait</th>
            <th>attempts</th>
            <th>run</th>
            <th>outcome</th>
          </tr>
        </thead>
        <tbody>
          {view.toolCalls.map((call) => (
            <tr key={call.id}>
              <td>
                <code>{call.id}</code>
              </td>
              <td>{call.tool}</td>
              <td>
                <StatusChip status={call.state} />
              </td>
              <td>{call.workerId ?? '—'}</td>
              <td>{call.outcome ? formatMs(call.outcome.queuedMs) : '—'}</td>
              <td data-testid="call-attempts">{call.attempts.length || '—'}</td>
              <td>{call.outcome ? formatMs(call.outcome.runMs) : '—'}</td>
              <td className="outcome-cell">{call.outcome?.text.slice(0, 200) ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <CallAttempts calls={view.toolCalls} />
      <InputAudit entries={view.audit} />
      {view.messages && <JobMessages messages={view.messages} />}
      <h2>Result</h2>
      <pre data-testid="job-result">{JSON.stringify(view.result, null, 2)}</pre>
      <details>
        <summary>Request</summary>
        <pre>{JSON.stringify(view.request, null, 2)}</pre>
      </details>
    </section>
  );
}

function Legend() {
  return (
    <p className="legend">
      <span className="swatch queue" /> queue wait <span className="swatch" /> attempt{' '}
      <span className="swatch attempt failed" /> failed attempt <span className="swatch backoff" /> retry
      backoff <span className="swatch person" /> waiting for a person — colour: the call's state
    </p>
  );
}
