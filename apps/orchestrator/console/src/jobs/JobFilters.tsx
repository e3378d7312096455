import { JOB_STATUSES } from '@switchyard/client';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';
import {
  formatMetadataPairs,
  metadataFromParams,
  parseMetadataPairs,
  setMetadataParams,
} from './metadata-filter.ts';

/**
 * The job list's filters; applying them writes the URL (so a filtered list can be linked) and drops
 * the cursor. `teamFilter`: an operator's list, which holds every team's jobs, narrows to one team.
 */
export function JobFilters({ teamFilter }: { teamFilter: boolean }) {
  const [params, setParams] = useSearchParams();
  const [statuses, setStatuses] = useState<Set<string>>(
    new Set((params.get('status') ?? '').split(',').filter(Boolean)),
  );
  const [kind, setKind] = useState(params.get('kind') ?? '');
  const [team, setTeam] = useState(params.get('team') ?? '');
  const [createdAfter, setCreatedAfter] = useState(params.get('createdAfter') ?? '');
  const [createdBefore, setCreatedBefore] = useState(params.get('createdBefore') ?? '');
  const [metadata, setMetadata] = useState(() => formatMetadataPairs(metadataFromParams(params)));
  const [metadataError, setMetadataError] = useState<string | null>(null);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseMetadataPairs(metadata);
    if ('error' in parsed) {
      setMetadataError(`metadata: ${parsed.error}`);
      return;
    }
    setMetadataError(null);
    const next = new URLSearchParams();
    if (statuses.size > 0) next.set('status', [...statuses].join(','));
    if (kind) next.set('kind', kind);
    if (teamFilter && team.trim()) next.set('team', team.trim());
    if (createdAfter) next.set('createdAfter', createdAfter);
    if (createdBefore) next.set('createdBefore', createdBefore);
    setMetadataParams(next, parsed.pairs);
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
      {teamFilter && (
        <label>
          team
          <input
            type="text"
            name="team"
            placeholder="every team"
            value={team}
            onChange={(event) => setTeam(event.target.value)}
          />
        </label>
      )}
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
      <label>
        metadata
        <input
          type="text"
          name="metadata"
          placeholder="key=value key=value"
          value={metadata}
          onChange={(event) => setMetadata(event.target.value)}
        />
      </label>
      <button type="submit">Apply</button>
      {metadataError && (
        <p className="error" role="alert" data-testid="metadata-error">
          {metadataError}
        </p>
      )}
    </form>
  );
}
