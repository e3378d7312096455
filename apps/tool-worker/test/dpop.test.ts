import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, type JWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialFetch } from '../src/credentials/credential-fetch.ts';
import { OAuthCredentialSource } from '../src/credentials/credential-source.ts';
import { ResourceHint } from '../src/credentials/resource-hint.ts';
import { TokenCache } from '../src/credentials/token-cache.ts';

const AS_NONCE = 'as-nonce-1';
const RS_NONCE = 'rs-nonce-1';

/** A DPoP proof as the server received it, verified with the key it embeds (jose, not the SDK's code). */
interface Proof {
  claims: Record<string, unknown>;
  thumbprint: string;
}

async function verified(proof: string | undefined): Promise<Proof> {
  if (!proof) throw new Error('no DPoP header');
  const { payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt' });
  const jwk = decodeProtectedHeader(proof).jwk as JWK;
  expect(jwk.d).toBeUndefined();
  return { claims: payload, thumbprint: await calculateJwkThumbprint(jwk, 'sha256') };
}

/**
 * DPoP (RFC 9449) end to end against a real local HTTP server that plays the MCP server and its
 * authorization server, both demanding a nonce: the token request carries a proof for the token
 * endpoint and is sent again with the authorization server's nonce; every MCP request carries
 * `Authorization: DPoP <token>` and a proof for its own method and URL with `ath`, and a challenged one
 * is sent again with the MCP server's nonce. The token cache is real Redis.
 */
describe('DPoP: proofs on the token request and on every MCP request, nonces from both servers', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `sy-test-dpop-${randomUUID().slice(0, 8)}`;
  /** The MCP server and its authorization server: two origins, as DPoP nonces are kept per origin. */
  let servers: Server[];
  let base: string;
  let asBase: string;
  const tokenRequests: { proof: Proof; body: URLSearchParams; answered: number }[] = [];
  const mcpRequests: {
    method: string;
    url: string;
    authorization: string;
    proof: Proof;
    answered: number;
  }[] = [];
  let issued = 0;

  async function token(request: IncomingMessage, body: string, response: ServerResponse): Promise<void> {
    const proof = await verified(request.headers.dpop as string | undefined);
    const json = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
      tokenRequests.push({ proof, body: new URLSearchParams(body), answered: status });
      response
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(answer));
    };
    if (proof.claims.nonce !== AS_NONCE) {
      json(
        400,
        { error: 'use_dpop_nonce', error_description: 'a nonce, please' },
        { 'dpop-nonce': AS_NONCE },
      );
      return;
    }
    issued += 1;
    // Opaque token: which key it is bound to stays on this side (as cnf.jkt would, in a JWT).
    json(200, { access_token: `at-${issued}`, token_type: 'DPoP', expires_in: 600 });
  }

  async function mcp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const authorization = request.headers.authorization;
    if (!authorization) {
      response.writeHead(401, { 'www-authenticate': `DPoP resource_metadata="${base}/prm"` }).end();
      return;
    }
    const proof = await verified(request.headers.dpop as string | undefined);
    const answered = proof.claims.nonce === RS_NONCE ? 200 : 401;
    mcpRequests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      authorization,
      proof,
      answered,
    });
    if (answered === 401) {
      response
        .writeHead(401, {
          'www-authenticate': 'DPoP error="use_dpop_nonce", error_description="a nonce, please"',
          'dpop-nonce': RS_NONCE,
        })
        .end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }

  beforeAll(async () => {
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const json = (body: unknown) =>
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        const path = new URL(request.url ?? '/', 'http://localhost').pathname;
        const handled = (async () => {
          if (path === '/mcp') await mcp(request, response);
          else if (path === '/prm') json({ resource: `${base}/mcp`, authorization_servers: [asBase] });
          else if (path === '/.well-known/oauth-authorization-server') {
            json({
              issuer: asBase,
              token_endpoint: `${asBase}/token`,
              authorization_endpoint: `${asBase}/authorize`,
              response_types_supported: ['code'],
              token_endpoint_auth_methods_supported: ['client_secret_basic'],
              dpop_signing_alg_values_supported: ['ES256'],
            });
          } else if (path === '/token')
            await token(request, Buffer.concat(chunks).toString('utf8'), response);
          else response.writeHead(404).end();
        })();
        handled.catch((error: unknown) => response.writeHead(500).end(String(error)));
      });
    };
    servers = [createServer(handler), createServer(handler)];
    const [rs, as] = await Promise.all(
      servers.map(async (server) => {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      }),
    );
    [base, asBase] = [rs ?? '', as ?? ''];
  });

  afterAll(async () => {
    for (const server of servers ?? []) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('binds the token to the identity’s key and proves possession of it on every request', async () => {
    const source = new OAuthCredentialSource(
      'team-a',
      'docs',
      `${base}/mcp`,
      { type: 'client_credentials', clientId: 'team-a', clientSecret: 'team-a-secret', dpop: true },
      new TokenCache(redisStore(redis, prefix)),
      new ResourceHint(`${base}/mcp`, 'http'),
    );
    const send = credentialFetch(source);

    const first = await send(`${base}/mcp?session=1#part`, { method: 'POST', body: '{"jsonrpc":"2.0"}' });
    expect(first.status).toBe(200);

    // The token request: a proof for POST at the token endpoint, no `ath` (no token yet), then the same
    // request again with a new proof carrying the authorization server's nonce.
    expect(tokenRequests.map((request) => request.answered)).toEqual([400, 200]);
    const key = tokenRequests[0]?.proof.thumbprint;
    for (const [index, { proof, body }] of tokenRequests.entries()) {
      expect(proof.claims).toMatchObject({ htm: 'POST', htu: `${asBase}/token` });
      expect(proof.claims.ath).toBeUndefined();
      expect(proof.claims.nonce).toBe(index === 0 ? undefined : AS_NONCE);
      expect(proof.thumbprint).toBe(key);
      expect(body.get('grant_type')).toBe('client_credentials');
    }

    // The MCP request: `DPoP` scheme, a proof for this method and URL (no query, no fragment) whose `ath`
    // is the token's hash, signed by the key the token was issued to; challenged, sent again with the
    // MCP server's nonce.
    const ath = createHash('sha256').update('at-1', 'ascii').digest('base64url');
    expect(mcpRequests.map((request) => request.answered)).toEqual([401, 200]);
    for (const [index, request] of mcpRequests.entries()) {
      expect(request).toMatchObject({ method: 'POST', url: '/mcp?session=1', authorization: 'DPoP at-1' });
      expect(request.proof.claims).toMatchObject({ htm: 'POST', htu: `${base}/mcp`, ath });
      expect(request.proof.claims.nonce).toBe(index === 0 ? undefined : RS_NONCE);
      expect(request.proof.thumbprint).toBe(key);
    }

    // The nonce is remembered: the next request, a GET, is accepted at once, its proof made for a GET.
    const second = await send(`${base}/mcp`, { method: 'GET' });
    expect(second.status).toBe(200);
    expect(mcpRequests).toHaveLength(3);
    expect(mcpRequests[2]?.proof.claims).toMatchObject({
      htm: 'GET',
      htu: `${base}/mcp`,
      nonce: RS_NONCE,
      ath,
    });
    expect(tokenRequests).toHaveLength(2);

    // Every proof is fresh: no `jti` twice.
    const jtis = [...tokenRequests, ...mcpRequests].map(({ proof }) => proof.claims.jti);
    expect(new Set(jtis).size).toBe(jtis.length);

    // Cached under the key it is bound to: only this worker, which holds that key, finds it.
    const cached = await redis.keys(`${prefix}:oauth-token:team-a:*`);
    expect(cached).toEqual([`${prefix}:oauth-token:team-a:${encodeURIComponent(asBase)}:docs:dpop:${key}`]);
  });
});
