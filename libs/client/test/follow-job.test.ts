import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSwitchyardClient, type JobEvent, SwitchyardApiError } from '../src/index.ts';

const JOB_ID = 'job_00000000-0000-4000-8000-000000000001';
const at = '2026-12-01T00:00:00.000Z';

/** The events of a small batch job, as the orchestrator stores and numbers them. */
const EVENTS = [
  { id: 1, event: 'status', data: { status: 'queued', at } },
  { id: 2, event: 'status', data: { status: 'running', at } },
  { id: 3, event: 'tool_call.dispatched', data: { id: 'c1', tool: 'search__search', server: 'search', at } },
  {
    id: 4,
    event: 'tool_call.finished',
    data: {
      id: 'c1',
      tool: 'search__search',
      server: 'search',
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      queuedMs: 3,
      runMs: 5,
      finishedAt: at,
      at,
    },
  },
  { id: 5, event: 'status', data: { status: 'succeeded', at } },
];

const sse = (event: (typeof EVENTS)[number]) =>
  `id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;

/**
 * A real HTTP server standing in for the orchestrator's event stream. Each connection is answered by
 * the next entry of `plan`, given the Last-Event-ID the client sent; every request is recorded.
 */
type Plan = (request: IncomingMessage, response: ServerResponse, after: number) => void;
let server: Server | undefined;
const requests: Array<{ url: string; lastEventId: string | undefined }> = [];

async function serve(plan: Plan[], jobStatus = 'running'): Promise<string> {
  requests.length = 0;
  let connection = 0;
  server = createServer((request, response) => {
    const lastEventId = request.headers['last-event-id'] as string | undefined;
    requests.push({ url: request.url ?? '', lastEventId });
    if (request.url === `/v1/jobs/${JOB_ID}`) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: JOB_ID, status: jobStatus }));
      return;
    }
    const step = plan[Math.min(connection, plan.length - 1)];
    connection += 1;
    step?.(request, response, Number(lastEventId ?? 0));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(': connected\n\n');
}

/** Sends the events after `after` up to `upTo`, then cuts the TCP connection without ending the stream. */
const sendThenDrop =
  (upTo: number): Plan =>
  (_request, response, after) => {
    openStream(response);
    for (const event of EVENTS.filter((event) => event.id > after && event.id <= upTo))
      response.write(sse(event));
    // Let the bytes leave before the reset, as a proxy or a crashed replica would.
    setTimeout(() => response.socket?.destroy(), 50);
  };

/** Sends the events after `after` and ends the stream after the final status, as the orchestrator does. */
const sendToEnd: Plan = (_request, response, after) => {
  openStream(response);
  for (const event of EVENTS.filter((event) => event.id > after)) response.write(sse(event));
  response.end();
};

const problem = (status: number, kind: string, headers: Record<string, string> = {}): Plan => {
  return (request, response) => {
    response.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
    response.end(
      JSON.stringify({
        type: `urn:switchyard:problem:${kind}`,
        title: kind,
        status,
        detail: `${kind} for ${request.url}`,
        instance: request.url,
      }),
    );
  };
};

async function collect(events: AsyncIterable<JobEvent>): Promise<JobEvent[]> {
  const seen: JobEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('following a job over server-sent events', () => {
  it('resumes with Last-Event-ID after dropped connections and ends at the final status, each event once', async () => {
    const url = await serve([sendThenDrop(2), sendThenDrop(3), sendToEnd]);
    const reconnects: Array<string | undefined> = [];
    const client = createSwitchyardClient({ url, apiKey: 'key' });
    const events = await collect(
      client.followJob(JOB_ID, {
        reconnectDelayMs: 10,
        onReconnect: ({ lastEventId }) => reconnects.push(lastEventId),
      }),
    );
    expect(events.map((event) => event.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    const finished = events.find((event) => event.event === 'tool_call.finished');
    // Typed by the document: narrowing on `event` gives the outcome fields.
    if (finished?.event !== 'tool_call.finished') throw new Error('no tool_call.finished event');
    expect(finished.data.status).toBe('ok');
    expect(requests.map((request) => request.lastEventId)).toEqual([undefined, '2', '3']);
    expect(reconnects).toEqual(['2', '3']);
  });

  it('one connection (jobEvents) ends where the stream ends, without reconnecting', async () => {
    const url = await serve([sendThenDrop(2), sendToEnd]);
    const client = createSwitchyardClient({ url });
    const events: JobEvent[] = [];
    await expect(async () => {
      for await (const event of await client.jobEvents(JOB_ID)) events.push(event);
    }).rejects.toThrow();
    expect(events.map((event) => event.id)).toEqual(['1', '2']);
    expect(requests).toHaveLength(1);
  });

  it('ends when resuming after the final status: the stream has nothing more and the job has ended', async () => {
    const url = await serve([sendToEnd], 'succeeded');
    const client = createSwitchyardClient({ url });
    const events = await collect(client.followJob(JOB_ID, { lastEventId: '5', reconnectDelayMs: 10 }));
    expect(events).toEqual([]);
    expect(requests.map((request) => request.url)).toEqual([
      `/v1/jobs/${JOB_ID}/events`,
      `/v1/jobs/${JOB_ID}`,
    ]);
  });

  it('waits out a 503 with Retry-After, then resumes', async () => {
    const url = await serve([
      sendThenDrop(1),
      problem(503, 'dependency-unavailable', { 'retry-after': '1' }),
      sendToEnd,
    ]);
    const client = createSwitchyardClient({ url });
    const events = await collect(client.followJob(JOB_ID, { reconnectDelayMs: 10 }));
    expect(events.map((event) => event.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(requests.map((request) => request.lastEventId)).toEqual([undefined, '1', '1']);
  });

  it('does not retry a refusal: a 404 is thrown with its problem details', async () => {
    const url = await serve([problem(404, 'not-found')]);
    const client = createSwitchyardClient({ url });
    const error = await collect(client.followJob(JOB_ID)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SwitchyardApiError);
    expect(error).toMatchObject({
      status: 404,
      kind: 'not-found',
      problem: { type: 'urn:switchyard:problem:not-found' },
    });
    expect(requests).toHaveLength(1);
  });

  it('gives up after the configured number of failed reconnects, saying why', async () => {
    const url = await serve([problem(503, 'dependency-unavailable')]);
    const client = createSwitchyardClient({ url });
    await expect(
      collect(client.followJob(JOB_ID, { maxReconnects: 2, reconnectDelayMs: 10 })),
    ).rejects.toThrow(/gave up following the job after 2 failed reconnects: GET \/v1\/jobs\/.*: 503/);
    expect(requests).toHaveLength(3);
  });
});
