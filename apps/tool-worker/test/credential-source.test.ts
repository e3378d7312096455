import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CredentialError } from '../src/credentials/credential-error.ts';
import { OAuthCredentialSource } from '../src/credentials/credential-source.ts';
import { ResourceHint } from '../src/credentials/resource-hint.ts';
import { TokenCache } from '../src/credentials/token-cache.ts';

/**
 * One identity's OAuth credential against a real local HTTP server (the MCP server and its authorization
 * server) and the fleet's token cache in real Redis: a token endpoint that answers 404 is asked once per
 * pause, however many calls want a token meanwhile. Only the clock (Date) is moved, to end a pause.
 */
describe('OAuth credential source: a broken token endpoint is asked rarely', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `sy-test-credsource-${randomUUID().slice(0, 8)}`;
  let server: Server;
  let base: string;
  const counts = { probes: 0, tokens: 0 };
  let tokenAnswer: (response: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const json = (body: unknown) =>
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        const route = `${request.method} ${request.url}`;
        if (route === 'POST /mcp') {
          counts.probes += 1;
          response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/prm"` }).end();
        } else if (route === 'GET /prm') {
          json({ resource: `${base}/mcp`, authorization_servers: [base] });
        } else if (route === 'GET /.well-known/oauth-authorization-server') {
          json({
            issuer: base,
            token_endpoint: `${base}/token`,
            authorization_endpoint: `${base}/authorize`,
            response_types_supported: ['code'],
          });
        } else if (route === 'POST /token') {
          counts.tokens += 1;
          tokenAnswer(response);
        } else {
          response.writeHead(404).end('Not Found');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('fails every waiting call with one request, pauses 5 s then 10 s, and recovers once the endpoint works', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    tokenAnswer = (response) => response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    const source = new OAuthCredentialSource(
      'team-a',
      'docs',
      `${base}/mcp`,
      { type: 'client_credentials', clientId: 'team-a', clientSecret: 'team-a-secret' },
      new TokenCache(redisStore(redis, prefix)),
      new ResourceHint(`${base}/mcp`, 'http'),
    );
    const attempt = () => source.current().catch((error: unknown) => error);

    const failures = await Promise.all(Array.from({ length: 5 }, attempt));
    expect(counts).toEqual({ probes: 1, tokens: 1 });
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(CredentialError);
      expect(failure).toMatchObject({ problem: 'unavailable', team: 'team-a', server: 'docs' });
      expect((failure as Error).message).toBe(
        `team team-a's credential for server docs could not be obtained: token endpoint ${base}/token answered HTTP 404`,
      );
    }
    // Within the pause: the same answer, nobody asked.
    expect(await attempt()).toBe(failures[0]);
    expect(counts.tokens).toBe(1);

    // After 5 s: tried again (rediscovering: an unavailable authorization may have been fixed), fails again.
    vi.setSystemTime(Date.now() + 5_001);
    expect(await attempt()).toMatchObject({ problem: 'unavailable' });
    expect(counts).toEqual({ probes: 2, tokens: 2 });
    // The next pause is twice as long.
    vi.setSystemTime(Date.now() + 5_001);
    expect(await attempt()).toMatchObject({ problem: 'unavailable' });
    expect(counts.tokens).toBe(2);

    tokenAnswer = (response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: 'at-1', token_type: 'Bearer', expires_in: 600 }));
    vi.setSystemTime(Date.now() + 5_001);
    expect(await source.current()).toEqual({ name: 'Authorization', value: 'Bearer at-1' });
    expect(counts.tokens).toBe(3);
    // Cached from now on: no further request.
    expect(await source.current()).toEqual({ name: 'Authorization', value: 'Bearer at-1' });
    expect(counts.tokens).toBe(3);
  });
});
