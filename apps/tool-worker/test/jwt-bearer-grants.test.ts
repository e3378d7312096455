import { randomUUID } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OAuthCredential, redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CredentialError } from '../src/credentials/credential-error.ts';
import { OAuthCredentialSource } from '../src/credentials/credential-source.ts';
import { ResourceHint } from '../src/credentials/resource-hint.ts';
import { TokenCache } from '../src/credentials/token-cache.ts';

type Route = (request: IncomingMessage, body: URLSearchParams, response: ServerResponse) => void;

/**
 * The JWT bearer grants against a real local HTTP server playing the MCP server, its authorization
 * server and an enterprise identity provider, with the fleet's token cache in real Redis: a workload
 * token read from its file and read again when the platform rotates it, and the identity provider's
 * failures told apart and named.
 */
describe('JWT bearer grants: workload identity and enterprise-managed authorization', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `sy-test-jwt-bearer-${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-jwt-bearer-'));
  let server: Server;
  let base: string;
  let routes: Record<string, Route>;
  const asked: { route: string; body: URLSearchParams; authorization: string | undefined }[] = [];

  const json =
    (body: unknown, status = 200): Route =>
    (_request, _body, response) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const route = `${request.method} ${request.url}`;
        const body = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        asked.push({ route, body, authorization: request.headers.authorization });
        const handler = routes[route];
        if (handler) handler(request, body, response);
        else response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    asked.length = 0;
    routes = {
      'POST /mcp': (_request, _body, response) => {
        response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/prm"` }).end();
      },
      'GET /prm': json({ resource: `${base}/mcp`, authorization_servers: [base] }),
      'GET /.well-known/oauth-authorization-server': json({
        issuer: base,
        token_endpoint: `${base}/token`,
        authorization_endpoint: `${base}/authorize`,
        response_types_supported: ['code'],
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
      }),
    };
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const sourceFor = (team: string, credential: OAuthCredential) =>
    new OAuthCredentialSource(
      team,
      'docs',
      `${base}/mcp`,
      credential,
      new TokenCache(redisStore(redis, prefix)),
      new ResourceHint(`${base}/mcp`, 'http'),
    );
  const tokenRequests = () => asked.filter(({ route }) => route === 'POST /token');

  it('presents the projected token from its file, and a rotated file at once after a refusal', async () => {
    const tokenFile = join(dir, 'token');
    // As the kubelet rotates a projected token: a new file swapped in under the same path.
    const project = (jwt: string) => {
      writeFileSync(`${tokenFile}.new`, `${jwt}\n`);
      renameSync(`${tokenFile}.new`, tokenFile);
    };
    routes['POST /token'] = (_request, body, response) => {
      if (body.get('assertion') === 'eyJ.expired.sig') {
        json({ error: 'invalid_grant', error_description: 'the assertion has expired' }, 400)(
          _request,
          body,
          response,
        );
      } else
        json({ access_token: 'workload-at', token_type: 'Bearer', expires_in: 600 })(
          _request,
          body,
          response,
        );
    };
    project('eyJ.expired.sig');
    const source = sourceFor('team-w', {
      type: 'workload_identity',
      clientId: 'workload',
      assertionFile: tokenFile,
    });

    const refused = await source.current().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CredentialError);
    expect(refused).toMatchObject({ problem: 'unobtainable', team: 'team-w', server: 'docs' });
    expect((refused as Error).message).toBe(
      `team team-w's credential for server docs could not be obtained: token endpoint ${base}/token refused it: invalid_grant (the assertion has expired)`,
    );
    // Paused: the same file is not presented again.
    expect(await source.current().catch((error: unknown) => error)).toBe(refused);
    expect(tokenRequests()).toHaveLength(1);

    // The platform rotated the token: asked again at once, with the new one.
    project('eyJ.fresh.sig');
    expect(await source.current()).toEqual({ name: 'Authorization', value: 'Bearer workload-at' });
    const requests = tokenRequests();
    expect(requests.map(({ body }) => body.get('assertion'))).toEqual(['eyJ.expired.sig', 'eyJ.fresh.sig']);
    // RFC 7523 §2.1 grant from a public client: the client id in the body, no secret, no Authorization.
    expect(Object.fromEntries(requests[1]?.body ?? [])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: 'eyJ.fresh.sig',
      client_id: 'workload',
      resource: `${base}/mcp`,
    });
    expect(requests[1]?.authorization).toBeUndefined();
  });

  it('names the identity provider’s endpoint: a refusal is the credential’s, a missing endpoint is unavailable', async () => {
    const credential: OAuthCredential = {
      type: 'enterprise_managed_authorization',
      clientId: 'mcp-client',
      clientSecret: 'mcp-secret',
      idp: { issuer: `${base}/idp`, clientId: 'idp-client' },
      idToken: 'eyJ.id-token.sig',
    };
    // The identity provider publishes OpenID metadata with only what a token exchange needs.
    routes['GET /.well-known/openid-configuration/idp'] = json({
      issuer: `${base}/idp`,
      token_endpoint: `${base}/idp/token`,
    });

    routes['POST /idp/token'] = json({ error: 'invalid_grant', error_description: 'ID token expired' }, 400);
    const refused = await sourceFor('team-x', credential)
      .current()
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ problem: 'unobtainable', team: 'team-x' });
    expect((refused as Error).message).toBe(
      `team team-x's credential for server docs could not be obtained: identity provider token endpoint ${base}/idp/token refused the token exchange: Token exchange failed: invalid_grant - ID token expired`,
    );
    const exchange = asked.find(({ route }) => route === 'POST /idp/token')?.body;
    // RFC 8693 for an ID-JAG naming the MCP server's authorization server and the MCP server.
    expect(Object.fromEntries(exchange ?? [])).toMatchObject({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      subject_token: 'eyJ.id-token.sig',
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      audience: base,
      resource: `${base}/mcp`,
      client_id: 'idp-client',
    });
    expect(tokenRequests()).toHaveLength(0);

    delete routes['POST /idp/token'];
    const unavailable = await sourceFor('team-y', credential)
      .current()
      .catch((error: unknown) => error);
    expect(unavailable).toMatchObject({ problem: 'unavailable', team: 'team-y' });
    expect((unavailable as Error).message).toBe(
      `team team-y's credential for server docs could not be obtained: identity provider token endpoint ${base}/idp/token answered HTTP 404`,
    );
  });
});
