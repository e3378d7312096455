import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllowList } from '../src/egress/address-policy.ts';
import { systemResolve } from '../src/egress/webhook-target-check.ts';
import { sendWebhook } from '../src/webhooks/webhook-sender.ts';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const message = (url: string) => ({
  id: 'job_1.job.succeeded.job',
  url,
  payload: '{"type":"job.succeeded"}',
  secret: SECRET,
});

/** The receivers here listen on loopback, which an operator has to allow (docs/operations.md, Webhooks). */
const egress = { allow: parseAllowList(['127.0.0.1/32']), resolve: systemResolve };
const within = (timeoutMs: number) => ({ timeoutMs, egress });

/** One attempt against a real local HTTP server: what counts as delivered, and what a bad receiver costs. */
describe('sendWebhook', () => {
  const servers: Server[] = [];

  const serve = async (handler: RequestListener): Promise<string> => {
    const server = createServer(handler);
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  };

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends a body the receiver verifies with the Standard Webhooks library; 2xx is delivered', async () => {
    let verified: unknown;
    const url = await serve((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        verified = new Webhook(SECRET).verify(
          Buffer.concat(chunks).toString(),
          request.headers as Record<string, string>,
        );
        response.writeHead(202).end();
      });
    });
    expect(await sendWebhook(message(url), within(5_000))).toEqual({ ok: true, statusCode: 202 });
    expect(verified).toEqual({ type: 'job.succeeded' });
  });

  it('reads none of an endless error body and shows only the status', async () => {
    const url = await serve((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' });
      const chunk = 'overloaded '.repeat(1000);
      // Never ends: an attempt that read the whole body would hang until its timeout.
      const pump = () => {
        while (response.write(chunk)) {}
        response.once('drain', pump);
      };
      pump();
    });
    const attempt = await sendWebhook(message(url), within(10_000));
    expect(attempt.ok).toBe(false);
    expect(attempt.statusCode).toBe(503);
    expect(attempt.error).toBe('answered 503 (Service Unavailable)');
  });

  it('gives up on a receiver that never answers after the timeout, naming it', async () => {
    const url = await serve(() => undefined);
    expect(await sendWebhook(message(url), within(300))).toEqual({
      ok: false,
      error: 'no answer within 300 ms',
    });
  });

  it('reports a refused connection', async () => {
    const url = await serve(() => undefined);
    const server = servers.pop() as Server;
    await new Promise((resolve) => server.close(resolve));
    const attempt = await sendWebhook(message(url), within(5_000));
    expect(attempt.ok).toBe(false);
    expect(attempt.error).toContain('ECONNREFUSED');
  });

  it('does not follow a redirect', async () => {
    let followed = false;
    const target = await serve((_request, response) => {
      followed = true;
      response.writeHead(200).end();
    });
    const url = await serve((_request, response) => response.writeHead(302, { location: target }).end());
    expect(await sendWebhook(message(url), within(5_000))).toEqual({
      ok: false,
      statusCode: 302,
      error: 'answered 302 (redirects are not followed)',
    });
    expect(followed).toBe(false);
  });
});
