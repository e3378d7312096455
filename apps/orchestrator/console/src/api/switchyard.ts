import { createSwitchyardClient, type SwitchyardClient } from '@switchyard/client';
import { storedApiKey } from '../auth/api-key.ts';

/**
 * The typed Switchyard client (@switchyard/client, generated from the OpenAPI document) for the
 * orchestrator that serves this page, with the key the person typed in (or `apiKey`: a key being
 * checked before it is kept). Made per call: the key can change (Change key) and a client is only a
 * base URL and a header.
 */
export function switchyard(apiKey = storedApiKey()): SwitchyardClient {
  return createSwitchyardClient({ url: window.location.origin, ...(apiKey ? { apiKey } : {}) });
}
