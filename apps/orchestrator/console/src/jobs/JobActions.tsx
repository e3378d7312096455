import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { switchyard } from '../api/switchyard.ts';
import { FINAL_JOB_STATUSES, type Job, type JobRequest } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';

/**
 * What a team's key can do to its job: cancel it while it runs, delete it once it has ended (the API
 * refuses a running one with a 409), or retry it. The API has no retry of its own: Retry submits the
 * job's request again as a new job and opens that one; this job stays as it is. An mcp job (one
 * tools/call made through /mcp) is not a request POST /v1/jobs takes, so it has no Retry.
 * Operators read jobs but may not act on them: the page does not show this for them.
 */
export function JobActions({ job }: { job: Job }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const ended = FINAL_JOB_STATUSES.has(job.status);
  const act = useMutation({
    mutationFn: (action: () => Promise<void>) => action(),
  });
  const cancel = () =>
    act.mutate(async () => {
      await switchyard().cancelJob(job.id);
      await client.invalidateQueries({ queryKey: ['job', job.id] });
    });
  const remove = () =>
    act.mutate(async () => {
      await switchyard().deleteJob(job.id);
      client.removeQueries({ queryKey: ['job', job.id] });
      navigate('/', { state: { deleted: job.id } });
    });
  const retry = () =>
    act.mutate(async () => {
      // The view's request is what was submitted (an agent job's with the model it ran on).
      const again = await switchyard().submitJob(job.request as JobRequest);
      navigate(`/jobs/${again.id}`);
    });
  return (
    <div className="job-actions" data-testid="job-actions">
      {!ended && (
        <button type="button" data-testid="cancel-job" disabled={act.isPending} onClick={cancel}>
          Cancel job
        </button>
      )}
      {job.kind !== 'mcp' && (
        <button
          type="button"
          data-testid="retry-job"
          disabled={act.isPending}
          onClick={retry}
          title="Submits the same request again as a new job; this job stays as it is"
        >
          Retry as a new job
        </button>
      )}
      {ended &&
        (confirmingDelete ? (
          <span className="confirm" data-testid="confirm-delete">
            Delete this job with its calls and events? This cannot be undone.{' '}
            <button type="button" data-testid="confirm-delete-yes" disabled={act.isPending} onClick={remove}>
              Delete
            </button>{' '}
            <button type="button" onClick={() => setConfirmingDelete(false)}>
              Keep it
            </button>
          </span>
        ) : (
          <button type="button" data-testid="delete-job" onClick={() => setConfirmingDelete(true)}>
            Delete…
          </button>
        ))}
      {job.kind !== 'mcp' && (
        <small className="muted">Retry submits the same request again as a new job.</small>
      )}
      {act.error && <ErrorNote error={act.error} />}
    </div>
  );
}
