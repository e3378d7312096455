import { writeFileSync } from 'node:fs';
import { errors, Provider } from 'oidc-provider';
import { appendLedger } from './ledger.ts';
import { httpPort, onTermination } from './serve.ts';

/**
 * A real OAuth 2.1 authorization server for tests (oidc-provider): the client credentials grant,
 * introspection (RFC 7662) for the protected MCP server, and revocation (RFC 7009).
 *
 * Usage: `auth-server --http <port>`, with
 * - AUTH_CLIENTS: JSON array of { client_id, client_secret } (each team's client, and the MCP server's own),
 * - AUTH_RESOURCE: the protected MCP server's URL (the one resource indicator tokens are issued for),
 * - AUTH_TOKEN_TTL: access token lifetime in seconds (default 3600),
 * - AUTH_LEDGER: a file recording every token issued (client id only, never the token),
 * - AUTH_REFRESH_CLIENTS: JSON array of { client_id, client_secret, refresh_token_file }: clients of the
 *   refresh token grant. For each, a refresh token is minted at start-up and written to its file — what an
 *   operator would obtain once, interactively, and hand to the deployment as a secret file.
 * - AUTH_TOKEN_ENDPOINT_STATUS: when set (e.g. 404), every token request is answered with that status and
 *   a plain-text body, as by a token endpoint that is not there; its metadata still names it.
 * Every token request is in the ledger (`token_request`, with the status answered), so a test can count them.
 */
const ClientsSchemaError = 'AUTH_CLIENTS must be a JSON array of { client_id, client_secret }';

interface ClientEntry {
  client_id: string;
  client_secret: string;
  refresh_token_file?: string;
}

function clientsFromEnv(raw: string | undefined): ClientEntry[] {
  const parsed: unknown = JSON.parse(raw ?? '[]');
  if (!Array.isArray(parsed)) throw new Error(ClientsSchemaError);
  return parsed.map((client: Partial<Record<keyof ClientEntry, unknown>>) => {
    if (typeof client.client_id !== 'string' || typeof client.client_secret !== 'string') {
      throw new Error(ClientsSchemaError);
    }
    return {
      client_id: client.client_id,
      client_secret: client.client_secret,
      ...(typeof client.refresh_token_file === 'string'
        ? { refresh_token_file: client.refresh_token_file }
        : {}),
    };
  });
}

/** A refresh token for `client`, as the authorization code flow an operator went through would leave. */
async function mintRefreshToken(provider: Provider, clientId: string, resource: string): Promise<string> {
  const client = await provider.Client.find(clientId);
  if (!client) throw new Error(`unknown client ${clientId}`);
  const accountId = `operator-of-${clientId}`;
  const grant = new provider.Grant({ accountId, clientId });
  grant.addResourceScope(resource, 'tools');
  const grantId = await grant.save();
  const token = new provider.RefreshToken({
    client,
    accountId,
    grantId,
    scope: 'tools',
    resource,
    gty: 'authorization_code',
  });
  return token.save();
}

async function main(): Promise<void> {
  const port = httpPort(process.argv.slice(2), process.env.AUTH_HTTP_PORT) ?? 0;
  if (port === 0) throw new Error('the authorization server needs a fixed --http port (its issuer URL)');
  const issuer = `http://127.0.0.1:${port}`;
  const resource = process.env.AUTH_RESOURCE;
  if (!resource) throw new Error('AUTH_RESOURCE (the protected MCP server URL) is not set');
  const ttl = Number(process.env.AUTH_TOKEN_TTL ?? 3600);
  const ledger = process.env.AUTH_LEDGER;

  const refreshClients = clientsFromEnv(process.env.AUTH_REFRESH_CLIENTS);
  const provider = new Provider(issuer, {
    clients: [
      ...clientsFromEnv(process.env.AUTH_CLIENTS).map(({ client_id, client_secret }) => ({
        client_id,
        client_secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      ...refreshClients.map(({ client_id, client_secret }) => ({
        client_id,
        client_secret,
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: ['http://127.0.0.1/unused'],
      })),
    ],
    // Every refresh hands out a new refresh token and retires the old one: a client that kept using the
    // first would be refused (and its grant revoked).
    rotateRefreshToken: true,
    // offline_access is what enables the refresh token grant.
    scopes: ['openid', 'offline_access', 'tools'],
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // A token request without a resource indicator still gets a token for the MCP server.
        defaultResource: () => resource,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator.replace(/\/+$/, '') !== resource.replace(/\/+$/, ''))
            throw new errors.InvalidTarget();
          return { scope: 'tools', audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: ttl };
        },
      },
    },
    ttl: { ClientCredentials: ttl },
  });
  provider.on('client_credentials.saved', (token) =>
    appendLedger(ledger, { event: 'issued', client_id: token.clientId }),
  );
  provider.on('access_token.saved', (token) =>
    appendLedger(ledger, { event: 'issued', client_id: token.clientId, grant: 'refresh_token' }),
  );
  provider.on('access_token.destroyed', (token) =>
    appendLedger(ledger, { event: 'revoked', client_id: token.clientId }),
  );
  provider.on('client_credentials.destroyed', (token) =>
    appendLedger(ledger, { event: 'revoked', client_id: token.clientId }),
  );

  const brokenTokenStatus = process.env.AUTH_TOKEN_ENDPOINT_STATUS
    ? Number(process.env.AUTH_TOKEN_ENDPOINT_STATUS)
    : undefined;
  provider.use(async (ctx, next) => {
    const isTokenRequest = ctx.method === 'POST' && ctx.path === '/token';
    if (isTokenRequest && brokenTokenStatus !== undefined) {
      ctx.status = brokenTokenStatus;
      ctx.type = 'text/plain';
      ctx.body = 'Not Found';
    } else {
      await next();
    }
    if (isTokenRequest) appendLedger(ledger, { event: 'token_request', status: ctx.status });
  });

  for (const { client_id, refresh_token_file } of refreshClients) {
    if (refresh_token_file)
      writeFileSync(refresh_token_file, await mintRefreshToken(provider, client_id, resource));
  }

  const http = provider.listen(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    http.once('listening', resolve);
    http.once('error', reject);
  });
  onTermination(async () => {
    http.closeAllConnections();
    http.close();
  });
  process.stdout.write(`${JSON.stringify({ listening: issuer })}\n`);
}

main().catch((error: unknown) => {
  // oidc-provider's errors keep the useful part (which metadata is wrong) in error_description.
  const { message = String(error), error_description: why = '' } = error as {
    message?: string;
    error_description?: string;
  };
  process.stderr.write(`failed to start the authorization server: ${message} ${why}\n`);
  process.exit(1);
});
