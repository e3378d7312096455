import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { SwitchyardApiError } from '../api/types.ts';
import { forgetApiKey, storeApiKey, storedApiKey } from './api-key.ts';

/**
 * Asks once per tab for the API key (a team's, or an operator's for the fleet view) and shows the
 * console behind it. A 401 from any call means the key is wrong or revoked: it is forgotten and asked
 * for again.
 */
export function KeyGate({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [key, setKey] = useState(storedApiKey());
  const [draft, setDraft] = useState('');

  useEffect(
    () =>
      client.getQueryCache().subscribe((event) => {
        const error = event.query.state.error;
        if (error instanceof SwitchyardApiError && error.status === 401) {
          forgetApiKey();
          setKey(null);
        }
      }),
    [client],
  );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    storeApiKey(draft.trim());
    client.clear();
    setKey(draft.trim());
  };

  if (key)
    return (
      <>
        <button
          type="button"
          className="sign-out"
          onClick={() => {
            forgetApiKey();
            client.clear();
            setKey(null);
          }}
        >
          Change key
        </button>
        {children}
      </>
    );
  return (
    <form className="key-gate" data-testid="key-gate" onSubmit={submit}>
      <h1>Switchyard console</h1>
      <label>
        API key (sent as <code>Authorization: Bearer</code>, kept for this tab only)
        <input
          type="password"
          name="apiKey"
          autoComplete="off"
          required
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
        />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}
