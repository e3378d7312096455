import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { readyReport } from '../support/readiness.ts';

/** Auth, team isolation, tool allow-lists and malformed input: 4xx with a reason, never a 5xx. */
describe('API boundaries', () => {
  let deployment: Deployment;
  let alpha: ApiClient;
  let alphaJob: string;

  beforeAll(async () => {
    deployment = new Deployment(
      'boundaries',
      (dir) => ({
        search: exampleServer('search', { trusted: true }),
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      }),
      {
        teams: {
          alpha: { apiKeys: ['alpha-key-0000000000000001'] },
          beta: { apiKeys: ['beta-key-00000000000000002'], maxConcurrentJobs: 1 },
          searchers: { apiKeys: ['searchers-key-000000000003'], tools: { allow: ['search__*'] } },
        },
        // Below the API's own 24 h cap, so the deployment's cap is the one that answers.
        orchestrator: { maxDeadlineMs: 3_600_000 },
      },
    );
    await deployment.startWorker();
    alpha = (await deployment.startOrchestrator()).api('alpha');
    const submitted = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'x' } }],
    });
    alphaJob = submitted.body.id;
    await alpha.finished(alphaJob);
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('answers 401 without a key or with an unknown one, on every /v1 route', async () => {
    for (const client of [alpha.withKey(undefined), alpha.withKey('not-a-real-key-at-all')]) {
      for (const [method, path] of [
        ['GET', `/v1/jobs/${alphaJob}`],
        ['POST', '/v1/jobs'],
        ['GET', '/v1/tools'],
        ['GET', '/v1/servers'],
        ['POST', `/v1/jobs/${alphaJob}/cancel`],
      ] as const) {
        const response = await client.request(method, path, method === 'POST' ? {} : undefined);
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.body.detail).toMatch(/Bearer|API key/);
      }
    }
  });

  it("hides another team's job: 404 for read, events and cancel", async () => {
    const beta = deployment.api('beta');
    expect((await beta.request('GET', `/v1/jobs/${alphaJob}`)).status).toBe(404);
    expect((await beta.request('GET', `/v1/jobs/${alphaJob}/events`)).status).toBe(404);
    expect((await beta.request('POST', `/v1/jobs/${alphaJob}/cancel`)).status).toBe(404);
    expect((await alpha.request('GET', `/v1/jobs/${alphaJob}`)).status).toBe(200);
  });

  it("neither shows nor dispatches a tool outside the team's allow-list", async () => {
    const searchers = deployment.api('searchers');
    const tools: Json = (await searchers.request('GET', '/v1/tools')).body;
    const names = tools.tools.map((tool: Json) => tool.name);
    expect(names).toContain('search__search');
    expect(names.some((name: string) => name.startsWith('notes__'))).toBe(false);
    expect(tools.tools.find((tool: Json) => tool.name === 'search__search')?.requiresTask).toBe(false);

    const submitted = await searchers.submit({
      kind: 'agent',
      input: 'write something',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'sneaky', tool: 'notes__add_note', arguments: { text: 'forbidden' } }] },
          { final: 'ok' },
        ],
      },
    });
    const job: Json = await searchers.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome).toMatchObject({
      status: 'failed',
      executed: 'no',
      error: 'unknown_or_disallowed_tool',
    });
    expect(readLedger(deployment.path('notes.jsonl'))).toHaveLength(0);
  });

  it.each([
    ['bad JSON', '{"kind": "batch",', 400, /not valid JSON/],
    ['a wrong type', { kind: 'batch', calls: 'all of them' }, 400, /calls/],
    ['an unknown kind', { kind: 'teleport' }, 400, /kind/],
    ['no kind', { input: 'hi' }, 400, /kind/],
    [
      'an unknown field',
      { kind: 'batch', calls: [{ tool: 'search__search' }], priority: 'high' },
      400,
      /priority/,
    ],
    [
      'input and messages both',
      {
        kind: 'agent',
        input: 'a',
        messages: [{ role: 'user', content: 'b' }],
        model: { provider: 'scripted', script: [{ final: 'x' }] },
      },
      400,
      /exactly one/,
    ],
    [
      'an unknown model provider',
      { kind: 'agent', input: 'a', model: { provider: 'oracle' } },
      400,
      /provider/,
    ],
    [
      'a hosted model without its key',
      { kind: 'agent', input: 'a', model: { provider: 'anthropic', name: 'claude' } },
      400,
      /ANTHROPIC_API_KEY/,
    ],
    ['no model and no default', { kind: 'agent', input: 'a' }, 400, /model/],
    ['an empty batch', { kind: 'batch', calls: [] }, 400, /calls/],
    ['a JSON array', [1, 2, 3], 400, /job request/],
  ])('rejects %s with a reason', async (_what, body, status, reason) => {
    const response = await alpha.submit(body);
    expect(response.status).toBe(status);
    expect(JSON.stringify(response.body)).toMatch(reason);
  });

  it('refuses a deadline past orchestrator.maxDeadlineMs with 400 naming both, and takes one up to it', async () => {
    const batch = (deadlineMs: number) => ({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'deadline' } }],
      limits: { deadlineMs },
    });
    const over = await alpha.submit(batch(3_600_001));
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({
      detail: expect.stringContaining('orchestrator.maxDeadlineMs'),
      errors: [{ path: 'limits.deadlineMs', message: expect.stringContaining('at most 3600000') }],
    });
    const at = await alpha.submit(batch(3_600_000));
    expect(at.status).toBe(201);
    expect((await alpha.finished(at.body.id)).status).toBe('succeeded');
  });

  it('rejects a huge payload with 413 and a malformed job id with 400', async () => {
    const huge = await alpha.submit({ kind: 'agent', input: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body.detail).toMatch(/larger than/);
    const badId = await alpha.request('GET', '/v1/jobs/..%2F..%2Fetc%2Fpasswd');
    expect(badId.status).toBe(400);
    const unknown = await alpha.request('GET', '/v1/jobs/job_00000000-0000-0000-0000-000000000000');
    expect(unknown.status).toBe(404);
  });

  it('refuses a job past the team limit with 429, and cancelling a finished job with 409', async () => {
    const beta = deployment.api('beta');
    const slowBatch = {
      kind: 'agent',
      input: 'wait',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ tool: 'notes__add_note', arguments: { text: 'hold', delayMs: 2_000 } }] },
          { final: 'ok' },
        ],
      },
    };
    const first = await beta.submit(slowBatch);
    expect(first.status).toBe(201);
    const second = await beta.submit(slowBatch);
    expect(second.status).toBe(429);
    expect(second.body.detail).toMatch(/maxConcurrentJobs/);
    await beta.finished(first.body.id);
    const again = await beta.request('POST', `/v1/jobs/${first.body.id}/cancel`);
    expect(again.status).toBe(409);
  });

  it('serves health, the fleet view and the OpenAPI document', async () => {
    expect((await alpha.request('GET', '/health/live')).status).toBe(200);
    // Exactly this backend's dependencies: on postgres no `redis` entry at all.
    expect((await alpha.request('GET', '/health/ready')).body).toEqual(readyReport());
    const servers: Json = (await alpha.withKey(TEAM_KEYS.operator).request('GET', '/v1/servers')).body;
    expect(servers.servers.map((server: Json) => [server.name, server.availability])).toEqual([
      ['search', 'ready'],
      ['notes', 'ready'],
    ]);
    expect(servers.servers[0].queue).toHaveProperty('waiting');
    // The example servers are built on the 2025 SDK: the sessions negotiated 2025-11-25, and say so.
    expect(servers.servers.map((server: Json) => server.protocolVersions)).toEqual([
      ['2025-11-25'],
      ['2025-11-25'],
    ]);
    expect(servers.servers[0].sessions[0].protocolVersion).toBe('2025-11-25');
    const docs: Json = (await alpha.request('GET', '/openapi.json')).body;
    expect(Object.keys(docs.paths)).toEqual(
      expect.arrayContaining(['/v1/jobs', '/v1/jobs/{id}', '/v1/jobs/{id}/events', '/v1/jobs/{id}/cancel']),
    );
  });
});
