import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { switchyard } from '../api/switchyard.ts';
import { SwitchyardApiError } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';

/**
 * Go to a job by its id. The id is looked up first, so a mistyped or foreign one says so here (the
 * API answers 404 for another team's job too) instead of opening an empty page.
 */
export function JobSearch() {
  const navigate = useNavigate();
  const [id, setId] = useState('');
  const lookup = useMutation({
    mutationFn: (jobId: string) => switchyard().getJob(jobId),
    onSuccess: (job) => navigate(`/jobs/${job.id}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const jobId = id.trim();
    if (jobId) lookup.mutate(jobId);
  };
  const missing = lookup.error instanceof SwitchyardApiError && lookup.error.status === 404;
  return (
    <form className="job-search" data-testid="job-search" onSubmit={submit}>
      <label>
        job id
        <input
          type="search"
          name="jobId"
          placeholder="job_…"
          value={id}
          onChange={(event) => setId(event.target.value)}
        />
      </label>
      <button type="submit" disabled={lookup.isPending}>
        Open
      </button>
      {missing ? (
        <p className="error" role="alert" data-testid="no-such-job">
          No such job: {lookup.variables} (or not this key's to see).
        </p>
      ) : (
        lookup.error && <ErrorNote error={lookup.error} />
      )}
    </form>
  );
}
