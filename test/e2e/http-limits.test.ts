import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiClient } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

const LIMITS = {
  maxEventStreamsPerTeam: 2,
  requestTimeoutMs: 3_000,
  headersTimeoutMs: 2_000,
  retryAfterSeconds: 4,
};
const LONG_CALL = {
  kind: 'batch',
  calls: [{ tool: 'slow__sleep', arguments: { ms: 30_000, progressEveryMs: 500 } }],
};

/**
 * Sends `payload` on a raw socket and never the rest, as a slow or malicious client does; resolves
 * with what the server answered and when it gave up on the connection.
 */
function trickle(url: string, payload: string, giveUpMs: number): Promise<{ answer: string; ms: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname, () => socket.write(payload));
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server still held the connection after ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, ms: Date.now() - started });
    });
  });
}

/** Open an event stream and keep it open; `close()` drops it from the client side. */
async function openStream(client: ApiClient, key: string, jobId: string) {
  const controller = new AbortController();
  const response = await fetch(`${client.baseUrl}/v1/jobs/${jobId}/events`, {
    headers: { authorization: `Bearer ${key}` },
    signal: controller.signal,
  });
  if (response.status !== 200) await response.text();
  return { response, close: () => controller.abort() };
}

describe('HTTP limits', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment(
      'http-limits',
      () => ({
        search: exampleServer('search', { trusted: true }),
        slow: exampleServer('slow', { trusted: true }),
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha] },
          beta: { apiKeys: [TEAM_KEYS.beta], maxConcurrentJobs: 1 },
        },
        orchestrator: LIMITS,
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-http-limits');
    alpha = orchestrator.api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('closes an event stream at once when Last-Event-ID is past the end of a finished job, and soon when at its end', async () => {
    const submitted = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'end' } }],
    });
    const events = await alpha.events(submitted.body.id);
    const last = Math.max(...events.map((event) => event.id));
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    // Past the end: nothing of this job can ever come, so no grace either (the job ended just now).
    // At the end: closed after the short grace in which a late final event would still arrive.
    for (const [lastEventId, withinMs] of [
      [last + 1_000_000, 1_900],
      [last, 6_000],
    ]) {
      const started = Date.now();
      // The stream must end by itself; waiting past 8 s means it never would.
      const replayed = await alpha.events(submitted.body.id, () => false, 8_000, lastEventId);
      expect(replayed, `Last-Event-ID ${lastEventId}`).toEqual([]);
      expect(Date.now() - started, `Last-Event-ID ${lastEventId}`).toBeLessThan(withinMs as number);
    }
  });

  it("caps a team's open event streams with 429 and Retry-After, and frees a slot when a stream closes", async () => {
    const submitted = await alpha.submit(LONG_CALL);
    const id = submitted.body.id;
    const streams = [
      await openStream(alpha, TEAM_KEYS.alpha, id),
      await openStream(alpha, TEAM_KEYS.alpha, id),
    ];
    try {
      expect(streams.map((stream) => stream.response.status)).toEqual([200, 200]);
      const refused = await openStream(alpha, TEAM_KEYS.alpha, id);
      expect(refused.response.status).toBe(429);
      expect(refused.response.headers.get('retry-after')).toBe('4');
      for (const stream of streams.splice(0)) stream.close();
      // The server frees the slots when it sees the connections close.
      await vi.waitFor(
        async () => {
          const again = await openStream(alpha, TEAM_KEYS.alpha, id);
          streams.push(again);
          expect(again.response.status).toBe(200);
        },
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      for (const stream of streams) stream.close();
      await alpha.request('POST', `/v1/jobs/${id}/cancel`);
    }
  });

  it('answers 429 with Retry-After past maxConcurrentJobs', async () => {
    const beta = orchestrator.api('beta');
    const first = await beta.submit(LONG_CALL);
    expect(first.status).toBe(201);
    try {
      const second = await beta.submit(LONG_CALL);
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('4');
      expect(second.body.detail).toMatch(/concurrent/i);
    } finally {
      await beta.request('POST', `/v1/jobs/${first.body.id}/cancel`);
    }
  });

  it('drops a client that trickles its headers after headersTimeoutMs', async () => {
    const { answer, ms } = await trickle(orchestrator.url, 'GET /v1/tools HTTP/1.1\r\nHost: x\r\n', 15_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(ms).toBeLessThan(LIMITS.headersTimeoutMs + 4_000);
  });

  it('drops a client that trickles its body after requestTimeoutMs', async () => {
    const { answer, ms } = await trickle(
      orchestrator.url,
      [
        'POST /v1/jobs HTTP/1.1',
        'Host: x',
        `Authorization: Bearer ${TEAM_KEYS.alpha}`,
        'Content-Type: application/json',
        'Content-Length: 1000',
        '',
        '{"kind": "batch", ',
      ].join('\r\n'),
      15_000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(ms).toBeLessThan(LIMITS.requestTimeoutMs + 4_000);
  });
});
