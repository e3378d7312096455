import { useQuery } from '@tanstack/react-query';
import { Link, useLocation, useSearchParams } from 'react-router';
import { switchyard } from '../api/switchyard.ts';
import type { JobListQuery, JobSummary } from '../api/types.ts';
import { useIsOperator } from '../auth/viewer-context.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { formatDuration, jobDuration } from '../format.ts';
import { StatusChip } from '../StatusChip.tsx';
import { JobFilters } from './JobFilters.tsx';
import { JobSearch } from './JobSearch.tsx';
import { metadataFromParams } from './metadata-filter.ts';

/**
 * The query of `GET /v1/jobs` from the page's URL (filters and cursor live there, so a list can be
 * linked: /console/jobs?status=failed).
 */
export function listQuery(params: URLSearchParams): JobListQuery {
  const status = params.get('status');
  const kind = params.get('kind');
  const team = params.get('team');
  const cursor = params.get('cursor');
  // The form holds local date-times; the API takes ISO 8601 instants.
  const instant = (name: string) => {
    const value = params.get(name);
    return value ? new Date(value).toISOString() : undefined;
  };
  const createdAfter = instant('createdAfter');
  const createdBefore = instant('createdBefore');
  const metadata = metadataFromParams(params);
  // Page size: 25, or the URL's `limit` (the API refuses more than it allows, and says so).
  const limit = Number(params.get('limit') ?? 25);
  return {
    limit,
    ...(status ? { status: status.split(',') as JobListQuery['status'] } : {}),
    ...(kind === 'agent' || kind === 'batch' || kind === 'mcp' ? { kind } : {}),
    ...(team ? { team } : {}),
    ...(cursor ? { cursor } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

/** The job list: a team's own jobs, or (an operator key) every team's, with a team column. */
export function JobListPage() {
  const operator = useIsOperator();
  const [params, setParams] = useSearchParams();
  // The job page's Delete lands here, naming the job it deleted.
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  const query = listQuery(params);
  const page = useQuery({
    queryKey: ['jobs', query],
    queryFn: () => switchyard().listJobs(query),
    refetchInterval: 5_000,
  });
  const nextPage = (cursor: string) => {
    const next = new URLSearchParams(params);
    next.set('cursor', cursor);
    setParams(next);
  };
  return (
    <section>
      <h1>Jobs</h1>
      {deleted && (
        <p className="notice" data-testid="deleted-notice">
          Deleted job <code>{deleted}</code>.
        </p>
      )}
      <JobSearch />
      <JobFilters teamFilter={operator} />
      {page.error && <ErrorNote error={page.error} />}
      <table className="grid" data-testid="job-list">
        <thead>
          <tr>
            <th>job</th>
            {operator && <th>team</th>}
            <th>kind</th>
            <th>status</th>
            <th>created</th>
            <th>finished</th>
            <th>duration</th>
            <th>metadata</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.jobs.map((job) => (
            <tr
              key={job.id}
              data-testid="job-row"
              data-job-id={job.id}
              data-status={job.status}
              data-team={job.team}
            >
              <td>
                <Link to={`/jobs/${job.id}`}>{job.id}</Link>
              </td>
              {operator && <td data-testid="job-team">{job.team}</td>}
              <td>{job.kind}</td>
              <td>
                <StatusChip status={job.status} />
              </td>
              <td>{new Date(job.createdAt).toLocaleString()}</td>
              <td>{job.finishedAt ? new Date(job.finishedAt).toLocaleString() : '—'}</td>
              <td data-testid="job-duration">
                <Duration job={job} nowMs={page.dataUpdatedAt} />
              </td>
              <td className="muted">
                {Object.entries(job.metadata)
                  .map(([key, value]) => `${key}=${value}`)
                  .join(' ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data && page.data.jobs.length === 0 && <p className="muted">No jobs match.</p>}
      <nav className="pager">
        {params.get('cursor') && (
          <button type="button" data-testid="previous-page" onClick={() => window.history.back()}>
            ← Newer
          </button>
        )}
        {page.data?.nextCursor && (
          <button
            type="button"
            data-testid="next-page"
            onClick={() => nextPage(page.data.nextCursor as string)}
          >
            Older →
          </button>
        )}
      </nav>
    </section>
  );
}

/**
 * Started → finished, or how long it has been running (as of the list's last read, which refreshes
 * every 5 s); a job not started yet has none.
 */
function Duration({ job, nowMs }: { job: JobSummary; nowMs: number }) {
  const duration = jobDuration(job, nowMs);
  if (!duration) return <span className="muted">—</span>;
  return duration.running ? (
    <span>running for {formatDuration(duration.ms)}</span>
  ) : (
    <span>{formatDuration(duration.ms)}</span>
  );
}
