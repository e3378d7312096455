import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { overlaps, recordedIntervals, sharedTime } from '../support/intervals.ts';

/** Agent and batch jobs over HTTP, through a real orchestrator, two workers and real MCP servers. */
describe('agent and batch jobs', () => {
  let deployment: Deployment;
  let api: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment('jobs', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      'rec-a': exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/rec-a.jsonl` },
        idempotent: ['record'],
      }),
      'rec-b': exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/rec-b.jsonl` },
        idempotent: ['record'],
      }),
      'rec-c': exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/rec-c.jsonl` },
        idempotent: ['record'],
      }),
    }));
    await Promise.all([deployment.startWorker({ id: 'w1' }), deployment.startWorker({ id: 'w2' })]);
    api = (await deployment.startOrchestrator('o1')).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('runs the tool calls of one model turn on two servers at the same time', async () => {
    const submitted = await api.submit({
      kind: 'agent',
      input: 'Record on both servers.',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { tool: 'rec-a__record', arguments: { ms: 400, label: 'turn-a' } },
              { tool: 'rec-b__record', arguments: { ms: 400, label: 'turn-b' } },
            ],
          },
          { final: 'Both recorded.' },
        ],
      },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    expect(submitted.body).toMatchObject({
      kind: 'agent',
      status: 'queued',
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });

    const job: Json = await api.finished(submitted.body.id);
    expect(job).toMatchObject({ status: 'succeeded', result: 'Both recorded.' });
    expect(job.toolCalls).toHaveLength(2);
    for (const call of job.toolCalls) {
      expect(call).toMatchObject({ status: 'ok', outcome: { status: 'ok', executed: 'yes', attempts: 1 } });
      expect(call.outcome.traceId).toBe(job.traceId);
    }
    const a = recordedIntervals(deployment.path('rec-a.jsonl')).filter((row) => row.label === 'turn-a');
    const b = recordedIntervals(deployment.path('rec-b.jsonl')).filter((row) => row.label === 'turn-b');
    // 400 ms each: run one after the other they would share nothing.
    expect(sharedTime(a, b)).toBeGreaterThan(200);
  });

  it('hands tool_error and invalid_arguments back to the model, which finishes the job', async () => {
    const submitted = await api.submit({
      kind: 'agent',
      input: 'Try things that fail.',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { id: 'missing-doc', tool: 'search__get_document', arguments: { id: 'no-such-doc' } },
              { id: 'bad-args', tool: 'notes__add_note', arguments: { text: 42 } },
            ],
          },
          { final: 'I could not do it, and I said why.' },
        ],
      },
    });
    const job: Json = await api.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    const byId = Object.fromEntries(job.toolCalls.map((call: Json) => [call.id, call]));
    expect(byId['missing-doc'].outcome).toMatchObject({ status: 'tool_error', executed: 'yes' });
    expect(byId['bad-args'].outcome).toMatchObject({
      status: 'invalid_arguments',
      executed: 'no',
      attempts: 0,
    });
    // What the model saw: error-status ToolMessages carrying the reason.
    const toolMessages = job.messages.filter((message: Json) => message.role === 'tool');
    expect(toolMessages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          toolCallId: 'missing-doc',
          status: 'error',
          content: expect.stringContaining('[tool_error]'),
        }),
        expect.objectContaining({
          toolCallId: 'bad-args',
          status: 'error',
          content: expect.stringContaining('arguments.text'),
        }),
      ]),
    );
    expect(job.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'I could not do it, and I said why.',
    });
    // On the wire each result is sent once: in toolCalls, not again as the tool message's content.
    const wire: Json = await api.request('GET', `/v1/jobs/${submitted.body.id}`);
    const wireTools = wire.body.messages.filter((message: Json) => message.role === 'tool');
    expect(wireTools.map((message: Json) => message.toolCallId).sort()).toEqual(['bad-args', 'missing-doc']);
    for (const message of wireTools) expect(message.content, message.toolCallId).toBeUndefined();
    expect(readLedger(deployment.path('notes.jsonl'))).toHaveLength(0);
  });

  it('runs a batch of hundreds of calls over serialized servers: every call settles, none overlap', async () => {
    const servers = ['rec-a', 'rec-b', 'rec-c'];
    const calls = Array.from({ length: 300 }, (_, index) => ({
      tool: `${servers[index % 3]}__record`,
      arguments: { ms: 1, label: `batch-${index}` },
    }));
    const submitted = await api.submit({ kind: 'batch', calls });
    expect(submitted.status).toBe(201);
    const job: Json = await api.finished(submitted.body.id);
    expect(job).toMatchObject({ status: 'succeeded', result: { calls: 300, outcomes: { ok: 300 } } });
    expect(job.toolCalls).toHaveLength(300);
    expect(job.toolCalls.every((call: Json) => call.outcome?.status === 'ok')).toBe(true);
    for (const server of servers) {
      const recorded = recordedIntervals(deployment.path(`${server}.jsonl`)).filter((row) =>
        row.label?.startsWith('batch-'),
      );
      expect(recorded).toHaveLength(100);
      expect(overlaps(recorded)).toEqual([]);
    }
  });

  it('streams progress as server-sent events', async () => {
    const submitted = await api.submit({
      kind: 'agent',
      input: 'search once',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 's1', tool: 'search__search', arguments: { query: 'trace' } }] },
          { final: 'done' },
        ],
      },
    });
    const events = await api.events(submitted.body.id);
    const kinds = events.map((event) =>
      event.event === 'status' ? `status:${event.data.status}` : event.event,
    );
    expect(kinds[0]).toBe('status:queued');
    expect(kinds).toEqual(
      expect.arrayContaining([
        'status:running',
        'step',
        'tool_call.dispatched',
        'tool_call.finished',
        'message',
      ]),
    );
    expect(kinds.at(-1)).toBe('status:succeeded');
    expect(kinds.indexOf('tool_call.dispatched')).toBeLessThan(kinds.indexOf('tool_call.finished'));
    expect(events.find((event) => event.event === 'tool_call.finished')?.data).toMatchObject({
      id: 's1',
      status: 'ok',
    });
    // A client that reconnects with Last-Event-ID gets only what came after.
    const replay = await api.request('GET', `/v1/jobs/${submitted.body.id}/events`, undefined, {
      'last-event-id': String(events.at(-2)?.id),
    });
    expect(replay.body).toContain('event: status');
    expect(replay.body).not.toContain('event: step');
  });

  it('returns the same job for the same Idempotency-Key', async () => {
    const body = { kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'queues' } }] };
    const first = await api.submit(body, { 'idempotency-key': 'nightly-42' });
    const second = await api.submit(body, { 'idempotency-key': 'nightly-42' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    const other = await deployment.api('beta').submit(body, { 'idempotency-key': 'nightly-42' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
  });
});
