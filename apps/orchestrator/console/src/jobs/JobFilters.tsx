import { JOB_STATUSES } from '@switchyard/client';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';

/** The job list's filters; applying them writes the URL (so a filtered list can be linked) and drops the cursor. */
export function JobFilters() {
  const [params, setParams] = useSearchParams();
  const [statuses, setStatuses] = useState<Set<string>>(
    new Set((params.get('status') ?? '').split(',').filter(Boolean)),
  );
  const [kind, setKind] = useState(params.get('kind') ?? '');
  const [createdAfter, setCreatedAfter] = useState(params.get('createdAfter') ?? '');
  const [createdBefore, setCreatedBefore] = useState(params.get('createdBefore') ?? '');

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (statuses.size > 0) next.set('status', [...statuses].join(','));
    if (kind) next.set('kind', kind);
    if (createdAfter) next.set('createdAfter', createdAfter);
    if (createdBefore) next.set('createdBefore', createdBefore);
    setParams(next);
  };
  const toggle = (status: string) => {
    const next = new Set(statuses);
    if (next.has(status)) next.delete(status);
    else next.add(status);
    setStatuses(next);
  };

  return (
    <form className="filters" data-testid="job-filters" onSubmit={apply}>
      <fieldset>
        <legend>status</legend>
        {JOB_STATUSES.map((status) => (
          <label key={status}>
            <input
              type="checkbox"
              name="status"
              value={status}
              checked={statuses.has(status)}
              onChange={() => toggle(status)}
            />
            {status}
          </label>
        ))}
      </fieldset>
      <label>
        kind
        <select name="kind" value={kind} onChange={(event) => setKind(event.target.value)}>
          <option value="">any</option>
          <option value="agent">agent</option>
          <option value="batch">batch</option>
          <option value="mcp">mcp</option>
        </select>
      </label>
      <label>
        created after
        <input
          type="datetime-local"
          name="createdAfter"
          value={createdAfter}
          onChange={(event) => setCreatedAfter(event.target.value)}
        />
      </label>
      <label>
        created before
        <input
          type="datetime-local"
          name="createdBefore"
          value={createdBefore}
          onChange={(event) => setCreatedBefore(event.target.value)}
        />
      </label>
      <button type="submit">Apply</button>
    </form>
  );
}
