import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllowList } from '../src/egress/address-policy.ts';
import {
  checkWebhookTarget,
  type EgressPolicy,
  type ResolvedAddress,
  type ResolveHost,
} from '../src/egress/webhook-target-check.ts';
import { refuseInternalWebhook } from '../src/egress/webhook-url-refusal.ts';
import { ProblemException } from '../src/http/problem.ts';
import { sendWebhook } from '../src/webhooks/webhook-sender.ts';

/** A resolver that answers from a table; any other name is a failure, so no test reaches real DNS. */
const resolver =
  (table: Record<string, string[]>): ResolveHost =>
  async (hostname) => {
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
    return answers.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const NAMES = resolver({
  'hooks.internal-only.test': ['10.0.0.5'],
  'hooks.split.test': ['93.184.215.14', '192.168.7.7'],
  'hooks.public.test': ['93.184.215.14', '2606:4700::6810:84e5'],
  'hooks.loopback.test': ['127.0.0.1'],
});
const policy = (allow: string[] = [], resolve: ResolveHost = NAMES): EgressPolicy => ({
  allow: parseAllowList(allow),
  resolve,
});

describe('webhook egress check', () => {
  it.each([
    ['http://127.0.0.1/hook', 'refused: 127.0.0.1 is loopback'],
    ['http://localhost:8080/hook', 'refused: localhost is a loopback name'],
    ['http://api.localhost/hook', 'refused: api.localhost is a loopback name'],
    ['http://2130706433/hook', 'refused: 127.0.0.1 is loopback'],
    ['http://0x7f000001/hook', 'refused: 127.0.0.1 is loopback'],
    ['http://017700000001/hook', 'refused: 127.0.0.1 is loopback'],
    ['http://127.1/hook', 'refused: 127.0.0.1 is loopback'],
    ['http://[::1]/hook', 'refused: ::1 is loopback'],
    ['http://[::ffff:127.0.0.1]/hook', 'refused: ::ffff:7f00:1 is loopback, IPv4-mapped 127.0.0.1'],
    ['http://[::ffff:7f00:1]/hook', 'refused: ::ffff:7f00:1 is loopback, IPv4-mapped 127.0.0.1'],
    ['http://[::127.0.0.1]/hook', 'refused: ::7f00:1 is loopback, IPv4-compatible 127.0.0.1'],
    ['http://[64:ff9b::a00:1]/hook', 'refused: 64:ff9b::a00:1 is private, NAT64 10.0.0.1'],
    ['http://169.254.169.254/latest/meta-data', 'refused: 169.254.169.254 is cloud metadata'],
    ['http://[fd00:ec2::254]/latest', 'refused: fd00:ec2::254 is cloud metadata'],
    [
      'http://metadata.google.internal/computeMetadata/v1',
      'refused: metadata.google.internal is a cloud metadata name',
    ],
    [
      'http://metadata.google.internal./computeMetadata/v1',
      'refused: metadata.google.internal is a cloud metadata name',
    ],
    ['http://169.254.1.1/hook', 'refused: 169.254.1.1 is link-local'],
    ['http://[fe80::1]/hook', 'refused: fe80::1 is link-local'],
    ['http://10.0.0.1/hook', 'refused: 10.0.0.1 is private'],
    ['http://172.16.0.1/hook', 'refused: 172.16.0.1 is private'],
    ['http://192.168.1.1/hook', 'refused: 192.168.1.1 is private'],
    ['http://[fd12:3456::1]/hook', 'refused: fd12:3456::1 is unique-local'],
    ['http://100.64.0.1/hook', 'refused: 100.64.0.1 is carrier-grade NAT'],
    ['http://0.0.0.0/hook', 'refused: 0.0.0.0 is unspecified'],
    ['http://0/hook', 'refused: 0.0.0.0 is unspecified'],
    ['http://[::]/hook', 'refused: :: is unspecified'],
    ['http://224.0.0.1/hook', 'refused: 224.0.0.1 is multicast'],
    ['http://[ff02::1]/hook', 'refused: ff02::1 is multicast'],
    ['http://255.255.255.255/hook', 'refused: 255.255.255.255 is broadcast'],
    ['http://240.0.0.1/hook', 'refused: 240.0.0.1 is reserved'],
    ['http://192.0.2.10/hook', 'refused: 192.0.2.10 is documentation'],
    ['http://[2001:db8::1]/hook', 'refused: 2001:db8::1 is documentation'],
    ['http://198.18.0.1/hook', 'refused: 198.18.0.1 is benchmarking'],
    ['http://[2002:a00:1::]/hook', 'refused: 2002:a00:1:: is 6to4'],
  ])('refuses %s, saying why, and it is final', async (url, reason) => {
    expect(await checkWebhookTarget(url, policy())).toEqual({ ok: false, reason, final: true });
  });

  it('refuses a name whose every address is not checked to be public', async () => {
    expect(await checkWebhookTarget('https://hooks.internal-only.test/hook', policy())).toEqual({
      ok: false,
      reason: 'refused: hooks.internal-only.test resolves to 10.0.0.5 (private)',
      // The name may resolve elsewhere later.
      final: false,
    });
    // One public answer does not carry a private one: the connection could use either.
    expect(await checkWebhookTarget('https://hooks.split.test/hook', policy())).toEqual({
      ok: false,
      reason: 'refused: hooks.split.test resolves to 192.168.7.7 (private)',
      final: false,
    });
  });

  it('passes public addresses and names, handing on the addresses it checked', async () => {
    for (const [url, host] of [
      ['https://93.184.215.14/hook', '93.184.215.14'],
      ['https://[2606:4700::6810:84e5]/hook', '2606:4700::6810:84e5'],
      ['https://[::ffff:93.184.215.14]/hook', '::ffff:5db8:d70e'],
      ['https://8.8.8.8:8443/hook', '8.8.8.8'],
    ] as const) {
      const check = await checkWebhookTarget(url, policy());
      expect(check).toMatchObject({ ok: true, host });
    }
    expect(await checkWebhookTarget('https://hooks.public.test/hook', policy())).toEqual({
      ok: true,
      host: 'hooks.public.test',
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:4700::6810:84e5', family: 6 },
      ],
    });
  });

  it('lets an allowed network through, but never a metadata address or name', async () => {
    const allowed = policy(['10.0.0.0/8', '127.0.0.1/32', 'fd12::/16', '169.254.0.0/16']);
    expect(await checkWebhookTarget('http://10.0.0.1/hook', allowed)).toMatchObject({ ok: true });
    expect(await checkWebhookTarget('https://hooks.internal-only.test/hook', allowed)).toMatchObject({
      ok: true,
      addresses: [{ address: '10.0.0.5', family: 4 }],
    });
    expect(await checkWebhookTarget('http://127.0.0.1:9/hook', allowed)).toMatchObject({ ok: true });
    expect(await checkWebhookTarget('http://[::ffff:127.0.0.1]/hook', allowed)).toMatchObject({ ok: true });
    expect(await checkWebhookTarget('http://[fd12:3456::1]/hook', allowed)).toMatchObject({ ok: true });
    // Outside the allowed /32 and /8: still refused.
    expect(await checkWebhookTarget('http://127.0.0.2/hook', allowed)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('http://192.168.1.1/hook', allowed)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('https://hooks.split.test/hook', allowed)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('http://169.254.169.254/', allowed)).toMatchObject({
      ok: false,
      reason: 'refused: 169.254.169.254 is cloud metadata',
    });
    expect(await checkWebhookTarget('http://metadata.google.internal/', allowed)).toMatchObject({
      ok: false,
    });
  });

  it('reports a name that does not resolve as a failure to retry, not a refusal', async () => {
    expect(await checkWebhookTarget('https://nowhere.test/hook', policy())).toEqual({
      ok: false,
      reason: 'cannot resolve nowhere.test: ENOTFOUND',
      final: false,
    });
  });
});

describe('webhook.url at submit', () => {
  const problemOf = (url: string, allow: string[] = []): ProblemException | undefined => {
    try {
      refuseInternalWebhook({ webhook: { url } }, parseAllowList(allow));
      return undefined;
    } catch (error) {
      if (error instanceof ProblemException) return error;
      throw error;
    }
  };

  it('is a 400 naming webhook.url and why for a literal internal address or refused name', () => {
    const problem = problemOf('http://2130706433:6379/');
    expect(problem?.getStatus()).toBe(400);
    expect(problem?.detail).toBe('webhook.url: must not point inside the deployment: 127.0.0.1 is loopback');
    expect(problem?.extensions).toEqual({
      errors: [
        { path: 'webhook.url', message: 'must not point inside the deployment: 127.0.0.1 is loopback' },
      ],
    });
    expect(problemOf('http://metadata.google.internal/')?.detail).toContain('cloud metadata name');
  });

  it('leaves names (checked at delivery), public and allowed addresses alone', () => {
    expect(problemOf('https://hooks.internal-only.test/hook')).toBeUndefined();
    expect(problemOf('https://93.184.215.14/hook')).toBeUndefined();
    expect(problemOf('http://127.0.0.1:8080/hook', ['127.0.0.1/32'])).toBeUndefined();
  });
});

/**
 * The sender against a real loopback listener: a refused spelling never opens a connection to it, an
 * allowed network does, the receiver's body never reaches the error, and a redirect is not followed.
 */
describe('sendWebhook egress', () => {
  const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const servers: Server[] = [];
  const message = (url: string) => ({ id: 'job_1.job.succeeded.job', url, payload: '{}', secret: SECRET });

  const listen = async (handler: RequestListener) => {
    const server = createServer(handler);
    servers.push(server);
    const counted = { connections: 0, requests: 0 };
    server.on('connection', () => counted.connections++);
    server.on('request', () => counted.requests++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port, counted };
  };

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('opens no connection to a loopback listener through any spelling of it', async () => {
    const { port, counted } = await listen((_request, response) => response.writeHead(204).end());
    const spellings = [
      `http://127.0.0.1:${port}/hook`,
      `http://localhost:${port}/hook`,
      `http://2130706433:${port}/hook`,
      `http://0x7f000001:${port}/hook`,
      `http://017700000001:${port}/hook`,
      `http://127.1:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://[::1]:${port}/hook`,
      `http://hooks.loopback.test:${port}/hook`,
    ];
    for (const url of spellings) {
      const attempt = await sendWebhook(message(url), { timeoutMs: 2_000, egress: policy() });
      expect(attempt, url).toMatchObject({ ok: false, error: expect.stringMatching(/^refused: /) });
    }
    expect(counted.connections).toBe(0);

    // The same listener, once an operator allows it: delivered, through a literal and through a name.
    const allowed = policy(['127.0.0.1/32']);
    for (const url of [`http://127.0.0.1:${port}/hook`, `http://hooks.loopback.test:${port}/hook`]) {
      expect(await sendWebhook(message(url), { timeoutMs: 2_000, egress: allowed })).toEqual({
        ok: true,
        statusCode: 204,
      });
    }
    expect(counted.requests).toBe(2);
  });

  it('connects to the address it checked, not to a second DNS answer', async () => {
    const { port, counted } = await listen((_request, response) => response.writeHead(204).end());
    let lookups = 0;
    // First answer allowed (and checked), any later one not: a sender that resolved the name again (here
    // or through the system resolver, which does not know it) would not reach the listener.
    const rebinding: ResolveHost = async () => {
      lookups++;
      return [{ address: lookups === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const attempt = await sendWebhook(message(`http://rebind.test:${port}/hook`), {
      timeoutMs: 2_000,
      egress: policy(['127.0.0.1/32'], rebinding),
    });
    expect(attempt).toEqual({ ok: true, statusCode: 204 });
    expect(lookups).toBe(1);
    expect(counted.requests).toBe(1);
  });

  it('keeps the receiver body out of the error', async () => {
    const { port } = await listen((_request, response) => {
      response.writeHead(500, 'db_password=secret', { 'content-type': 'text/plain' });
      response.end('db_password=secret');
    });
    const attempt = await sendWebhook(message(`http://127.0.0.1:${port}/hook`), {
      timeoutMs: 2_000,
      egress: policy(['127.0.0.1/32']),
    });
    expect(attempt).toEqual({ ok: false, statusCode: 500, error: 'answered 500 (Internal Server Error)' });
    expect(JSON.stringify(attempt)).not.toContain('db_password');
  });

  it('does not follow a redirect to another loopback listener', async () => {
    const other = await listen((_request, response) => response.writeHead(200).end());
    const { port } = await listen((_request, response) =>
      response.writeHead(302, { location: `http://127.0.0.1:${other.port}/hook` }).end(),
    );
    expect(
      await sendWebhook(message(`http://127.0.0.1:${port}/hook`), {
        timeoutMs: 2_000,
        egress: policy(['127.0.0.1/32']),
      }),
    ).toEqual({ ok: false, statusCode: 302, error: 'answered 302 (redirects are not followed)' });
    expect(other.counted.connections).toBe(0);
  });
});
