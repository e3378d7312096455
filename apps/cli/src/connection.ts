import { createSwitchyardClient, type SwitchyardClient } from '@switchyard/client';
import { UsageError } from './usage-error.ts';

/** Where the orchestrator listens unless told (its PORT default). */
export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface ConnectionOptions {
  url?: string;
  apiKey?: string;
}

/** The client for `--url`/`--api-key`, else SWITCHYARD_URL/SWITCHYARD_API_KEY. */
export function connect(options: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): SwitchyardClient {
  const url = options.url ?? env.SWITCHYARD_URL ?? DEFAULT_URL;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new UsageError(`--url / SWITCHYARD_URL: "${url}" is not an http(s) URL`);
  }
  const apiKey = options.apiKey ?? env.SWITCHYARD_API_KEY;
  if (!apiKey) throw new UsageError('no API key: give --api-key or set SWITCHYARD_API_KEY');
  return createSwitchyardClient({ url, apiKey });
}
