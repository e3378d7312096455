import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { switchyard } from '../api/switchyard.ts';
import type { JobListQuery } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { StatusChip } from '../StatusChip.tsx';
import { JobFilters } from './JobFilters.tsx';

/** The query of `GET /v1/jobs` from the page's URL (filters and cursor live there, so a list can be linked). */
export function listQuery(params: URLSearchParams): JobListQuery {
  const status = params.get('status');
  const kind = params.get('kind');
  const cursor = params.get('cursor');
  // The form holds local date-times; the API takes ISO 8601 instants.
  const instant = (name: string) => {
    const value = params.get(name);
    return value ? new Date(value).toISOString() : undefined;
  };
  const createdAfter = instant('createdAfter');
  const createdBefore = instant('createdBefore');
  // Page size: 25, or the URL's `limit` (the API refuses more than it allows, and says so).
  const limit = Number(params.get('limit') ?? 25);
  return {
    limit,
    ...(status ? { status: status.split(',') as JobListQuery['status'] } : {}),
    ...(kind === 'agent' || kind === 'batch' || kind === 'mcp' ? { kind } : {}),
    ...(cursor ? { cursor } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
  };
}

export function JobListPage() {
  const [params, setParams] = useSearchParams();
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
      <JobFilters />
      {page.error && <ErrorNote error={page.error} />}
      <table className="grid" data-testid="job-list">
        <thead>
          <tr>
            <th>job</th>
            <th>kind</th>
            <th>status</th>
            <th>created</th>
            <th>finished</th>
            <th>metadata</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.jobs.map((job) => (
            <tr key={job.id} data-testid="job-row" data-job-id={job.id} data-status={job.status}>
              <td>
                <Link to={`/jobs/${job.id}`}>{job.id}</Link>
              </td>
              <td>{job.kind}</td>
              <td>
                <StatusChip status={job.status} />
              </td>
              <td>{new Date(job.createdAt).toLocaleString()}</td>
              <td>{job.finishedAt ? new Date(job.finishedAt).toLocaleString() : '—'}</td>
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
