import { createSwitchyardClient, type SwitchyardClient } from '@switchyard/client';
import { storedApiKey } from '../auth/api-key.ts';

/**
 * The typed Switchyard client (@switchyard/client, generated from the OpenAPI document) for the
 * orchestrator that serves this page, with the key the person typed in. Made per call: the key can
 * change (Change key) and a client is only a base URL and a header.
 */
export function switchyard(): SwitchyardClient {
  const apiKey = storedApiKey();
  return createSwitchyardClient({ url: window.location.origin, ...(apiKey ? { apiKey } : {}) });
}
