import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { switchyard } from '../api/switchyard.ts';
import { SwitchyardApiError } from '../api/types.ts';
import { ErrorNote } from '../ErrorNote.tsx';
import { forgetApiKey, storeApiKey, storedApiKey } from './api-key.ts';
import { ViewerContext } from './viewer-context.ts';

const WHOAMI = ['whoami'];

/** Why a key was refused, as the API said it. */
function refusalOf(error: SwitchyardApiError): string {
  return `The key was refused (${error.status}): ${error.problem?.detail ?? error.message}`;
}

/**
 * Asks once per tab for the API key (a team's, or an operator's) and shows the console behind it.
 * A typed key is checked with GET /v1/whoami before it is kept: a wrong one stays on this form with the
 * API's reason, and the pages learn whether they serve a team or an operator. A 401 from a later call
 * means the kept key was revoked: it is forgotten and asked for again, with the reason.
 */
export function KeyGate({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [key, setKey] = useState(storedApiKey());
  const [draft, setDraft] = useState('');
  const [refusal, setRefusal] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<unknown>(null);
  // The kept key's identity; on a reload, checked again (it may have been revoked meanwhile).
  const viewer = useQuery({
    queryKey: WHOAMI,
    queryFn: () => switchyard().whoami(),
    enabled: key !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });

  const signOut = (reason: string | null) => {
    forgetApiKey();
    client.clear();
    setKey(null);
    setRefusal(reason);
  };

  useEffect(
    () =>
      client.getQueryCache().subscribe((event) => {
        // Only a request that just failed: clearing the cache also reports its queries, old 401s
        // included, and those must not forget the key typed since. A query no longer in the cache was
        // asked with a key given up since: its answer says nothing about the current one.
        if (event.type !== 'updated' || event.action.type !== 'error') return;
        if (client.getQueryCache().get(event.query.queryHash) !== event.query) return;
        const error = event.action.error;
        if (error instanceof SwitchyardApiError && error.status === 401) {
          forgetApiKey();
          client.clear();
          setKey(null);
          setRefusal(refusalOf(error));
        }
      }),
    [client],
  );

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const candidate = draft.trim();
    setChecking(true);
    setCheckError(null);
    try {
      const identity = await switchyard(candidate).whoami();
      storeApiKey(candidate);
      client.clear();
      client.setQueryData(WHOAMI, identity);
      setRefusal(null);
      setDraft('');
      setKey(candidate);
    } catch (error) {
      if (error instanceof SwitchyardApiError && error.status === 401) setRefusal(refusalOf(error));
      else setCheckError(error);
    } finally {
      setChecking(false);
    }
  };

  if (key && viewer.data)
    return (
      <ViewerContext.Provider value={viewer.data}>
        <span className="signed-in muted" data-testid="signed-in-as">
          {viewer.data.kind === 'operator' ? 'operator (read-only)' : `team ${viewer.data.team}`}
        </span>
        <button type="button" className="sign-out" onClick={() => signOut(null)}>
          Change key
        </button>
        {children}
      </ViewerContext.Provider>
    );
  if (key && viewer.error && !(viewer.error instanceof SwitchyardApiError && viewer.error.status === 401))
    return <ErrorNote error={viewer.error} />;
  if (key) return <p className="muted">Checking the key…</p>;
  return (
    <form className="key-gate" data-testid="key-gate" onSubmit={submit}>
      <h1>Switchyard console</h1>
      <label>
        API key (a team's, or an operator's for every team's jobs and the fleet, read-only; sent as{' '}
        <code>Authorization: Bearer</code>, kept for this tab only)
        <input
          type="password"
          name="apiKey"
          autoComplete="off"
          required
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
      </label>
      <button type="submit" disabled={checking}>
        Open
      </button>
      {refusal && (
        <p className="error" role="alert" data-testid="key-refused">
          {refusal}
        </p>
      )}
      {checkError !== null && <ErrorNote error={checkError} />}
    </form>
  );
}
