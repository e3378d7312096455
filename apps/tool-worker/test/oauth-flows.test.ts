import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { discoverAuthorizationServer, OAuthProblem, requestToken } from '../src/credentials/oauth-flows.ts';
import { ResourceHint } from '../src/credentials/resource-hint.ts';

type Route = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A real local HTTP server playing the MCP server and its authorization server, one route table per
 * test: what discovery and the token request are told, and what they asked for.
 */
describe('OAuth discovery and token requests (credentials/oauth-flows.ts, resource-hint.ts)', () => {
  let server: Server;
  let base: string;
  let routes: Record<string, Route>;
  const asked: string[] = [];

  const json =
    (body: unknown, status = 200): Route =>
    (_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
  const metadata = () =>
    json({
      issuer: base,
      token_endpoint: `${base}/token`,
      authorization_endpoint: `${base}/authorize`,
      response_types_supported: ['code'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
    });
  const credential = {
    type: 'client_credentials' as const,
    clientId: 'team-a',
    clientSecret: 'team-a-secret',
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      asked.push(`${request.method} ${request.url}`);
      request.resume();
      request.on('end', () => {
        const route = routes[`${request.method} ${request.url}`];
        if (route) route(request, response);
        else response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    routes = {};
    asked.length = 0;
  });

  it('reads the resource_metadata URL a 401 names, with one request that runs nothing', async () => {
    routes['POST /mcp'] = (_request, response) => {
      response
        .writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${base}/custom/prm.json"`,
        })
        .end();
    };
    const hint = new ResourceHint(`${base}/mcp`, 'http');
    expect((await hint.get())?.href).toBe(`${base}/custom/prm.json`);
    expect(await hint.get()).toBeDefined();
    expect(asked).toEqual(['POST /mcp']);
  });

  it('follows the metadata the 401 named before any well-known URL, then the authorization server’s', async () => {
    routes['GET /custom/prm.json'] = json({
      resource: `${base}/mcp`,
      authorization_servers: [`${base}/tenant`],
    });
    routes['GET /tenant/.well-known/openid-configuration'] = (request, response) => {
      json({
        issuer: `${base}/tenant`,
        token_endpoint: `${base}/tenant/token`,
        authorization_endpoint: `${base}/tenant/authorize`,
        jwks_uri: `${base}/tenant/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      })(request, response);
    };
    const found = await discoverAuthorizationServer(
      `${base}/mcp`,
      undefined,
      new URL(`${base}/custom/prm.json`),
    );
    expect(found).toMatchObject({
      issuer: `${base}/tenant`,
      url: `${base}/tenant`,
      resource: `${base}/mcp`,
      metadata: { token_endpoint: `${base}/tenant/token` },
    });
    expect(asked[0]).toBe('GET /custom/prm.json');
    expect(asked.some((line) => line.includes('oauth-protected-resource'))).toBe(false);
  });

  it('metadata the 401 named that cannot be read is unavailable, naming the URL; nothing is guessed', async () => {
    const failure = await discoverAuthorizationServer(
      `${base}/mcp`,
      undefined,
      new URL(`${base}/custom/prm.json`),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OAuthProblem);
    expect(failure).toMatchObject({ kind: 'unavailable' });
    expect((failure as Error).message).toContain(`tried ${base}/custom/prm.json (HTTP 404)`);
    expect(asked).toEqual(['GET /custom/prm.json']);
  });

  it('no metadata naming a token endpoint is unavailable, listing every URL tried, and no token is asked for', async () => {
    const failure = await discoverAuthorizationServer(`${base}/mcp`, undefined, undefined).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ kind: 'unavailable' });
    const message = (failure as Error).message;
    expect(message).toContain('no OAuth metadata (RFC 9728 / RFC 8414 / OpenID) names a token endpoint');
    expect(message).toContain(`${base}/.well-known/oauth-protected-resource/mcp (HTTP 404)`);
    expect(message).toContain(`${base}/.well-known/openid-configuration (HTTP 404)`);
    expect(asked.some((line) => line.startsWith('POST'))).toBe(false);
  });

  it('a token endpoint answering 404 is unavailable; an OAuth error answer is the credential refused', async () => {
    routes['GET /.well-known/oauth-protected-resource/mcp'] = json({
      resource: `${base}/mcp`,
      authorization_servers: [base],
    });
    routes['GET /.well-known/oauth-authorization-server'] = metadata();
    const authorizationServer = await discoverAuthorizationServer(`${base}/mcp`, undefined, undefined);

    const missing = await requestToken(credential, authorizationServer, undefined).catch(
      (error: unknown) => error,
    );
    expect(missing).toMatchObject({
      kind: 'unavailable',
      message: `token endpoint ${base}/token answered HTTP 404`,
    });

    routes['POST /token'] = json(
      { error: 'invalid_client', error_description: 'client authentication failed' },
      401,
    );
    const refused = await requestToken(credential, authorizationServer, undefined).catch(
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ kind: 'refused' });
    expect((refused as Error).message).toContain(`token endpoint ${base}/token refused it: invalid_client`);
    // The secret went to the token endpoint only, and is in no message.
    expect((refused as Error).message).not.toContain(credential.clientSecret);

    routes['POST /token'] = json({ access_token: 'at-1', token_type: 'bearer', expires_in: 60 });
    expect(await requestToken(credential, authorizationServer, undefined)).toMatchObject({
      access_token: 'at-1',
    });
  });
});
