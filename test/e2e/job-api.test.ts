import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

const PROBLEM = 'application/problem+json';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The job API of issue 12 against a real orchestrator, worker, MCP servers, Redis and PostgreSQL:
 * listing with filters and cursors, the full job view, batch outcomes, unknown tools, problem+json
 * errors, 415 and 422, DELETE and retention, and every body checked against the served OpenAPI 3.1.
 */
describe('job API', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let beta: ApiClient;
  let database: pg.Client;
  let openApi: Json;
  let ajv: Ajv2020;

  const batch = (calls: Json[], metadata?: Record<string, string>) => ({
    kind: 'batch',
    calls,
    ...(metadata ? { metadata } : {}),
  });
  const search = (query: string) => ({ tool: 'search__search', arguments: { query } });

  /** The body must match the schema the served document gives for this operation and status. */
  const expectDocumented = (
    response: ApiResponse<Json>,
    path: string,
    method: string,
    status = response.status,
  ) => {
    const media = String(response.headers.get('content-type')).split(';')[0] as string;
    const pointer = `openapi#/paths/${path.replaceAll('/', '~1')}/${method}/responses/${status}/content/${media.replace('/', '~1')}/schema`;
    const check = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
    const valid = check(response.body);
    expect(valid, `${method} ${path} ${status}: ${JSON.stringify(check.errors)?.slice(0, 800)}`).toBe(true);
  };

  const expectProblem = (response: ApiResponse<Json>, status: number, kind: string, detail?: RegExp) => {
    const where = `${response.status} ${JSON.stringify(response.body).slice(0, 400)}`;
    expect(response.status, where).toBe(status);
    expect(response.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
    expect(response.body, where).toMatchObject({
      type: `urn:switchyard:problem:${kind}`,
      title: expect.any(String),
      status,
      detail: expect.any(String),
      instance: expect.stringMatching(/^\//),
    });
    if (detail) expect(response.body.detail, where).toMatch(detail);
  };

  beforeAll(async () => {
    deployment = new Deployment(
      'job-api',
      (dir) => ({
        search: exampleServer('search', { trusted: true }),
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      }),
      { orchestrator: { jobRetentionDays: 1, retentionSweepMs: 1_000 } },
    );
    await deployment.startWorker({ id: 'w-api' });
    orchestrator = await deployment.startOrchestrator('o-api');
    alpha = orchestrator.api('alpha');
    beta = orchestrator.api('beta');
    database = new pg.Client({ connectionString: deployment.databaseUrl });
    await database.connect();
    openApi = (await alpha.request('GET', '/openapi.json')).body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(openApi, 'openapi');
  });

  afterAll(async () => {
    await database?.end();
    await deployment?.close();
  });

  it('serves a valid OpenAPI 3.1 document with operation ids, declared path parameters and a reference UI', async () => {
    const result = await new Validator().validate(openApi);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(openApi.openapi).toBe('3.1.0');
    const operations: Json[] = Object.entries(openApi.paths).flatMap(([path, item]: [string, Json]) =>
      Object.values(item).map((operation: Json) => ({ path, ...operation })),
    );
    expect(operations.map((operation) => operation.operationId).sort()).toEqual(
      [
        'answerJobInput',
        'cancelJob',
        'decideJobApproval',
        'deleteJob',
        'getJob',
        'getLiveness',
        'getReadiness',
        'listJobs',
        'listJobWebhooks',
        'listModels',
        'listServers',
        'listTools',
        'streamJobEvents',
        'submitJob',
        'whoami',
      ].sort(),
    );
    for (const operation of operations) {
      const declared = (operation.parameters ?? [])
        .filter((p: Json) => p.in === 'path')
        .map((p: Json) => p.name);
      const used = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      expect(declared, `${operation.operationId} path parameters`).toEqual(used);
      // Every success answer has a schema (clients are typed from it), every error is a Problem.
      for (const [status, answer] of Object.entries(operation.responses) as [string, Json][]) {
        if (status === '204') continue;
        const media = Object.keys(answer.content ?? {});
        expect(media.length, `${operation.operationId} ${status}`).toBe(1);
        if (Number(status) >= 400) expect(media).toEqual([PROBLEM]);
      }
    }
    const docs = await fetch(`${orchestrator.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect(await docs.text()).toContain('/openapi.json');
  });

  it('shows the submitted request, per-call times and workers, and ends a batch with failed calls completed_with_errors', async () => {
    const submitted = await alpha.submit(
      batch([search('switchyard'), { tool: 'notes__delete_note', arguments: { id: 'no-such-note' } }], {
        ticket: 'OPS-1',
      }),
    );
    expect(submitted.status).toBe(201);
    expectDocumented(submitted, '/v1/jobs', 'post');
    const response = await alpha.request('GET', `/v1/jobs/${submitted.body.id}`);
    await alpha.finished(submitted.body.id);
    const job: Json = (await alpha.request('GET', `/v1/jobs/${submitted.body.id}`)).body;
    expect(response.status).toBe(200);
    expect(job.status).toBe('completed_with_errors');
    expect(job.summary).toEqual({ calls: 2, pending: 0, byStatus: { ok: 1, tool_error: 1 } });
    expect(job.request).toMatchObject({ kind: 'batch', metadata: { ticket: 'OPS-1' } });
    expect(job.request.calls.map((call: Json) => call.tool)).toEqual([
      'search__search',
      'notes__delete_note',
    ]);
    expect(job.metadata).toEqual({ ticket: 'OPS-1' });
    for (const call of job.toolCalls) {
      expect(call.workerId).toBe('w-api');
      for (const at of [call.dispatchedAt, call.startedAt, call.finishedAt]) expect(at).toMatch(ISO);
      expect(Date.parse(call.dispatchedAt)).toBeLessThanOrEqual(Date.parse(call.startedAt));
      expect(Date.parse(call.startedAt)).toBeLessThanOrEqual(Date.parse(call.finishedAt));
      expect(call.outcome.finishedAt).toMatch(ISO);
      expect(call.outcome.startedAt).toMatch(ISO);
    }
    for (const at of [job.createdAt, job.startedAt, job.finishedAt]) expect(at).toMatch(ISO);
    expectDocumented({ ...response, body: job }, '/v1/jobs/{id}', 'get', 200);

    // Every call ok: succeeded.
    const clean = await alpha.submit(batch([search('a'), search('b')]));
    const ok: Json = await alpha.finished(clean.body.id);
    expect(ok.status).toBe('succeeded');
    expect(ok.summary).toEqual({ calls: 2, pending: 0, byStatus: { ok: 2 } });
  });

  it('speaks one role vocabulary: user/assistant/system/tool in the request and in the transcript', async () => {
    const submitted = await alpha.submit({
      kind: 'agent',
      messages: [
        { role: 'system', content: 'You look things up.' },
        { role: 'user', content: 'find switchyard' },
      ],
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'look', tool: 'search__search', arguments: { query: 'switchyard' } }] },
          { final: 'Found.' },
        ],
      },
      metadata: { ticket: 'OPS-2' },
    });
    expect(submitted.status).toBe(201);
    const job: Json = await alpha.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    expect(job.messages.map((message: Json) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(job.request).toMatchObject({
      kind: 'agent',
      model: { provider: 'scripted' },
      metadata: { ticket: 'OPS-2' },
    });
    expectDocumented(
      { status: 200, body: job, headers: new Headers({ 'content-type': 'application/json' }) },
      '/v1/jobs/{id}',
      'get',
    );
  });

  it('sends events whose data match the component schemas the document names for them', async () => {
    const submitted = await alpha.submit({
      kind: 'agent',
      input: 'look it up',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'look', tool: 'search__search', arguments: { query: 'events' } }] },
          { final: 'Looked.' },
        ],
      },
    });
    const events = await alpha.events(submitted.body.id);
    const components: Record<string, string> = {
      status: 'JobStatusEvent',
      step: 'JobStepEvent',
      message: 'JobMessageEvent',
      'tool_call.dispatched': 'ToolCallDispatchedEvent',
      'tool_call.finished': 'ToolCallFinishedEvent',
    };
    expect(new Set(events.map((event) => event.event))).toEqual(new Set(Object.keys(components)));
    for (const event of events) {
      const pointer = `openapi#/components/schemas/${components[event.event]}`;
      const check = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
      expect(check(event.data), `${event.event}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
    const finished = events.find((event) => event.event === 'tool_call.finished');
    expect(finished?.data).toMatchObject({ workerId: 'w-api', startedAt: expect.stringMatching(ISO) });
  });

  it("lists only the team's jobs, newest first, filtered, in pages that follow the cursor", async () => {
    const before = new Date().toISOString();
    const mine: string[] = [];
    for (let index = 0; index < 5; index++) {
      const submitted = await alpha.submit(
        batch([search(`page ${index}`)], { suite: 'list', index: String(index) }),
      );
      mine.push(submitted.body.id);
    }
    const theirs = await beta.submit(batch([search('beta')], { suite: 'list' }));
    for (const id of [...mine, theirs.body.id]) await (id === theirs.body.id ? beta : alpha).finished(id);

    const listed = await alpha.request('GET', `/v1/jobs?metadata[suite]=list&createdAfter=${before}`);
    expect(listed.status).toBe(200);
    expectDocumented(listed, '/v1/jobs', 'get');
    expect(listed.body.jobs.map((job: Json) => job.id)).toEqual([...mine].reverse());
    expect(listed.body.nextCursor).toBeNull();
    expect(
      (await beta.request('GET', '/v1/jobs?metadata.suite=list')).body.jobs.map((job: Json) => job.id),
    ).toEqual([theirs.body.id]);

    // Pages of two: every job once, in order, then no cursor.
    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse<Json> = await alpha.request(
        'GET',
        `/v1/jobs?metadata.suite=list&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      paged.push(...page.body.jobs.map((job: Json) => job.id));
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(paged).toEqual([...mine].reverse());
    expect(pages).toBe(3);

    const one = await alpha.request('GET', '/v1/jobs?metadata[suite]=list&metadata[index]=3');
    expect(one.body.jobs.map((job: Json) => job.id)).toEqual([mine[3]]);
    const statuses = await alpha.request(
      'GET',
      '/v1/jobs?status=succeeded,failed&kind=batch&metadata.suite=list',
    );
    expect(statuses.body.jobs).toHaveLength(5);
    const repeated = await alpha.request('GET', '/v1/jobs?status=queued&status=running&metadata.suite=list');
    expect(repeated.body.jobs).toEqual([]);
    expect((await alpha.request('GET', '/v1/jobs?kind=agent&metadata.suite=list')).body.jobs).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await alpha.request('GET', `/v1/jobs?createdAfter=${future}`)).body.jobs).toEqual([]);
    expect(
      (await alpha.request('GET', `/v1/jobs?createdBefore=${before}&metadata.suite=list`)).body.jobs,
    ).toEqual([]);
  });

  it.each([
    ['a cursor it did not issue', 'cursor=bm90LWEtY3Vyc29y', 'invalid-cursor', /cursor/],
    ['a cursor of garbage', 'cursor=%%%', 'invalid-cursor', /cursor/],
    ['a huge limit', 'limit=100000', 'validation-failed', /limit/],
    ['a limit of 0', 'limit=0', 'validation-failed', /limit/],
    ['a limit that is no number', 'limit=ten', 'validation-failed', /limit/],
    ['an unknown status', 'status=done', 'validation-failed', /status/],
    ['an unknown kind', 'kind=cron', 'validation-failed', /kind/],
    ['a date that is no date', 'createdAfter=yesterday', 'validation-failed', /createdAfter/],
    ['an unknown parameter', 'sort=asc', 'validation-failed', /sort/],
    ['a metadata key twice', 'metadata.a=1&metadata.a=2', 'validation-failed', /metadata/],
  ])('refuses to list with %s: 400 naming it', async (_what, query, kind, detail) => {
    const response = await alpha.request('GET', `/v1/jobs?${query}`);
    expectProblem(response, 400, kind, detail);
    expectDocumented(response, '/v1/jobs', 'get');
  });

  it('refuses unknown tools at submit with the closest names, and tools outside the team allow-list', async () => {
    const typo = await alpha.submit(batch([search('x'), { tool: 'search_search', arguments: {} }]));
    expectProblem(typo, 400, 'unknown-tools', /search_search \(did you mean search__search\?\)/);
    expect(typo.body.unknownTools).toEqual([{ name: 'search_search', suggestions: ['search__search'] }]);
    expectDocumented(typo, '/v1/jobs', 'post');
    const nowhere = await alpha.submit(batch([{ tool: 'weather__forecast', arguments: {} }]));
    expectProblem(nowhere, 400, 'unknown-tools', /weather__forecast/);
    const searchers = deployment.api('searchers');
    const denied = await searchers.submit(batch([{ tool: 'notes__add_note', arguments: { text: 'no' } }]));
    expectProblem(denied, 400, 'unknown-tools', /notes__add_note/);
    // Nothing was stored for any of them.
    const rows = await database.query(
      `SELECT count(*) FROM ${deployment.schema}.jobs WHERE request::text LIKE '%search_search%'`,
    );
    expect(Number(rows.rows[0].count)).toBe(0);
  });

  it('answers problem+json with field paths for invalid bodies, 415 for bodies that are not JSON', async () => {
    const invalid = await alpha.submit({ kind: 'batch', calls: [{ tool: '' }] });
    expectProblem(invalid, 400, 'validation-failed');
    expect(invalid.body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'calls.0.tool' })]),
    );
    expectProblem(await alpha.submit('{"kind": "batch",'), 400, 'malformed-body', /not valid JSON/);
    expectProblem(
      await alpha.request('POST', '/v1/jobs', JSON.stringify(batch([search('x')])), {
        'content-type': 'text/plain',
      }),
      415,
      'unsupported-media-type',
      /text\/plain/,
    );
    const noType = await fetch(`${orchestrator.url}/v1/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEAM_KEYS.alpha}` },
      body: new Blob([JSON.stringify(batch([search('x')]))]),
    });
    expect(noType.status).toBe(415);
    expect(noType.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expectProblem(
      await alpha.request('POST', '/v1/jobs'),
      415,
      'unsupported-media-type',
      /JSON body is required/,
    );
    expectProblem(await alpha.request('GET', '/v1/nothing-here'), 404, 'not-found');
    expectProblem(await alpha.withKey(undefined).request('GET', '/v1/jobs'), 401, 'unauthorized');
  });

  it('returns the same job for a replayed Idempotency-Key and 422 when the body differs', async () => {
    const headers = { 'idempotency-key': `replay-${Date.now()}` };
    const first = await alpha.submit(batch([search('once')], { a: '1', b: '2' }), headers);
    expect(first.status).toBe(201);
    // The same request with its keys in another order is the same request.
    const again = await alpha.submit(
      { metadata: { b: '2', a: '1' }, calls: [search('once')], kind: 'batch' },
      headers,
    );
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const other = await alpha.submit(batch([search('twice')]), headers);
    expectProblem(other, 422, 'idempotency-key-reused', new RegExp(first.body.id));
    expectDocumented(other, '/v1/jobs', 'post');
    await alpha.finished(first.body.id);
  });

  it('deletes an ended job with everything kept of it; a running one is a 409, another team gets a 404', async () => {
    const slow = await alpha.submit(
      batch([{ tool: 'notes__add_note', arguments: { text: 'slow', delayMs: 3_000 } }]),
    );
    await alpha.events(slow.body.id, (event) => event.event === 'tool_call.dispatched');
    const early = await alpha.request('DELETE', `/v1/jobs/${slow.body.id}`);
    expectProblem(early, 409, 'conflict', /cancel it/);
    expectDocumented(early, '/v1/jobs/{id}', 'delete');
    await alpha.finished(slow.body.id);

    const agent = await alpha.submit({
      kind: 'agent',
      input: 'look',
      model: {
        provider: 'scripted',
        script: [{ toolCalls: [{ tool: 'search__search', arguments: { query: 'q' } }] }, { final: 'ok' }],
      },
    });
    await alpha.finished(agent.body.id);
    const count = async (table: string, column: string, id: string) =>
      Number(
        (
          await database.query(`SELECT count(*) FROM ${deployment.schema}.${table} WHERE ${column} = $1`, [
            id,
          ])
        ).rows[0].count,
      );
    expect(await count('checkpoints', 'thread_id', agent.body.id)).toBeGreaterThan(0);
    expectProblem(await beta.request('DELETE', `/v1/jobs/${agent.body.id}`), 404, 'not-found');

    const deleted = await alpha.request('DELETE', `/v1/jobs/${agent.body.id}`);
    expect(deleted.status).toBe(204);
    expectProblem(await alpha.request('GET', `/v1/jobs/${agent.body.id}`), 404, 'not-found');
    for (const [table, column] of [
      ['jobs', 'id'],
      ['tool_calls', 'job_id'],
      ['job_events', 'job_id'],
      ['checkpoints', 'thread_id'],
      ['checkpoint_writes', 'thread_id'],
      ['checkpoint_blobs', 'thread_id'],
    ] as const)
      expect(await count(table, column, agent.body.id), table).toBe(0);
    expectProblem(await alpha.request('DELETE', `/v1/jobs/${agent.body.id}`), 404, 'not-found');
  });

  it('deletes jobs past orchestrator.jobRetentionDays on its scheduled sweep, and keeps the others', async () => {
    const expired = await alpha.submit(batch([search('old')]));
    const recent = await alpha.submit(batch([search('new')]));
    await alpha.finished(expired.body.id);
    await alpha.finished(recent.body.id);
    const sweep = orchestrator.process.waitFor(
      (log) => log.msg === 'deleted expired jobs' && Number(log.deleted) >= 1,
      'a retention sweep that deletes the expired job',
      60_000,
    );
    await database.query(
      `UPDATE ${deployment.schema}.jobs SET finished_at = now() - interval '2 days' WHERE id = $1`,
      [expired.body.id],
    );
    await sweep;
    expectProblem(await alpha.request('GET', `/v1/jobs/${expired.body.id}`), 404, 'not-found');
    expect((await alpha.request('GET', `/v1/jobs/${recent.body.id}`)).status).toBe(200);
  });

  it('documents every answer it gives: tools, servers, cancel, health', async () => {
    expectDocumented(await alpha.request('GET', '/v1/tools'), '/v1/tools', 'get');
    expectDocumented(await alpha.request('GET', '/v1/servers'), '/v1/servers', 'get');
    expectDocumented(
      await alpha.withKey(TEAM_KEYS.operator).request('GET', '/v1/servers'),
      '/v1/servers',
      'get',
    );
    expectDocumented(await alpha.request('GET', '/health/ready'), '/health/ready', 'get');
    expectDocumented(await alpha.request('GET', '/health/live'), '/health/live', 'get');
    const slow = await alpha.submit(
      batch([{ tool: 'notes__add_note', arguments: { text: 'c', delayMs: 2_000 } }]),
    );
    const cancelled = await alpha.request('POST', `/v1/jobs/${slow.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expectDocumented(cancelled, '/v1/jobs/{id}/cancel', 'post');
    await alpha.finished(slow.body.id);
    const again = await alpha.request('POST', `/v1/jobs/${slow.body.id}/cancel`);
    expectProblem(again, 409, 'conflict');
    expectDocumented(again, '/v1/jobs/{id}/cancel', 'post');
  });
});
