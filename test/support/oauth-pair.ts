import type { Fleet } from './fleet.ts';
import { exampleServerPath, tsxArgs } from './paths.ts';

/** An OAuth client of the example authorization server: a client id and its secret. */
export interface OAuthClient {
  client_id: string;
  client_secret: string;
}

/**
 * The repo's OAuth example pair, started in `fleet`'s process group: the authorization server
 * (oidc-provider, `auth-server`) on `ports.auth`, which knows `clients` and the MCP server's own client,
 * and the OAuth-protected MCP server (`protected`) on `ports.mcp`, which introspects tokens as that client.
 * Ledgers in the fleet's folder: `auth.jsonl` (tokens issued, token requests), `requests.jsonl` (every
 * request the MCP server got) and `calls.jsonl` (every call that ran). `env` adds each one's settings.
 */
export async function startOAuthPair(
  fleet: Fleet,
  ports: { auth: number; mcp: number },
  clients: { server: OAuthClient; others: OAuthClient[] },
  env: { auth?: Record<string, string>; server?: Record<string, string> } = {},
): Promise<{ issuer: string; resource: string }> {
  const issuer = `http://127.0.0.1:${ports.auth}`;
  const resource = `http://127.0.0.1:${ports.mcp}/mcp`;
  const auth = fleet.group.start(
    'auth server',
    tsxArgs(exampleServerPath('auth-server'), '--http', String(ports.auth)),
    {
      AUTH_CLIENTS: JSON.stringify([...clients.others, clients.server]),
      AUTH_RESOURCE: resource,
      AUTH_LEDGER: fleet.path('auth.jsonl'),
      ...env.auth,
    },
  );
  await auth.waitFor(
    (log) => typeof log.listening === 'string',
    'the authorization server to listen',
    60_000,
  );
  const server = fleet.group.start(
    'protected server',
    tsxArgs(exampleServerPath('protected'), '--http', String(ports.mcp)),
    {
      AUTH_ISSUER: issuer,
      AUTH_CLIENT_ID: clients.server.client_id,
      AUTH_CLIENT_SECRET: clients.server.client_secret,
      REQUEST_LEDGER: fleet.path('requests.jsonl'),
      CALL_LEDGER: fleet.path('calls.jsonl'),
      ...env.server,
    },
  );
  await server.waitFor(
    (log) => typeof log.listening === 'string',
    'the protected MCP server to listen',
    60_000,
  );
  return { issuer, resource };
}
