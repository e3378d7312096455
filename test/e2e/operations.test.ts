import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { TEST_BACKEND } from '../support/backend.ts';
import { Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { repeatedKeys } from '../support/log-lines.ts';
import type { TestProcess } from '../support/processes.ts';

/** What operators scrape and probe: /metrics and /health on both apps, and the queue dashboard. */
describe('metrics, health and the queue dashboard', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let worker: TestProcess;
  let workerUrl: string;

  beforeAll(async () => {
    deployment = new Deployment('ops', () => ({
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes'),
      // A server that dies on start: a worker serving only it is never ready.
      broken: {
        transport: 'stdio',
        command: process.execPath,
        args: ['-e', 'console.error("no database"); process.exit(3)'],
      },
    }));
    Object.assign(deployment.processEnv, {
      DASHBOARD_USERNAME: 'ops',
      DASHBOARD_PASSWORD: 'correct horse battery',
    });
    worker = await deployment.startWorker({ id: 'w-ops', servers: ['search', 'notes'] });
    const listening = await worker.waitFor(
      (log) => log.msg === 'worker http listening',
      'the worker http port',
    );
    workerUrl = `http://127.0.0.1:${listening.port}`;
    orchestrator = await deployment.startOrchestrator('o-ops');
    const api = orchestrator.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [
        { tool: 'search__search', arguments: { query: 'metrics' } },
        { tool: 'search__get_document', arguments: { id: 'nope' } },
        { tool: 'notes__add_note', arguments: { text: 7 } },
      ],
    });
    await api.finished(submitted.body.id);
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const text = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers });
    return { status: response.status, body: await response.text() };
  };

  it('exposes queue depth, outcomes, latencies, sessions and runs on the orchestrator', async () => {
    const { status, body } = await text(`${orchestrator.url}/metrics`);
    expect(status).toBe(200);
    expect(body).toMatch(
      /switchyard_queue_jobs\{queue="tools\.\{search\}",server="search",state="waiting"\} 0/,
    );
    expect(body).toMatch(/switchyard_queue_jobs\{queue="\{agent-runs\}",server="",state="active"\} \d+/);
    expect(body).toMatch(/switchyard_tool_call_outcomes_total\{server="search",status="ok",team="alpha"\} 1/);
    expect(body).toMatch(
      /switchyard_tool_call_outcomes_total\{server="search",status="tool_error",team="alpha"\} 1/,
    );
    expect(body).toMatch(
      /switchyard_tool_call_outcomes_total\{server="notes",status="invalid_arguments",team="alpha"\} 1/,
    );
    expect(body).toMatch(
      /switchyard_tool_call_duration_seconds_bucket\{le="\+Inf",server="search",status="ok"\} 1/,
    );
    expect(body).toMatch(/switchyard_tool_call_queue_wait_seconds_count\{server="search"\} 2/);
    expect(body).toMatch(/switchyard_mcp_sessions\{server="notes",state="ready"\} 1/);
    // Two of its three calls failed: the batch completed with errors.
    expect(body).toMatch(
      /switchyard_jobs_ended_total\{kind="batch",status="completed_with_errors",team="alpha"\} 1/,
    );
    expect(body).toMatch(/switchyard_jobs_submitted_total\{kind="batch",team="alpha"\} 1/);
  });

  it('exposes outcomes, latencies and session states on the worker', async () => {
    const { status, body } = await text(`${workerUrl}/metrics`);
    expect(status).toBe(200);
    expect(body).toMatch(/switchyard_worker_tool_calls_total\{server="search",tool="search",status="ok"\} 1/);
    expect(body).toMatch(
      /switchyard_worker_tool_calls_total\{server="search",tool="get_document",status="tool_error"\} 1/,
    );
    expect(body).toMatch(
      /switchyard_worker_tool_call_duration_seconds_count\{server="search",status="ok"\} 1/,
    );
    expect(body).toMatch(/switchyard_worker_mcp_sessions\{server="search",state="ready"\} 1/);
    expect(body).toMatch(/switchyard_worker_mcp_sessions\{server="search",state="reconnecting"\} 0/);
  });

  it('writes each field once per log line, on the worker and the orchestrator', async () => {
    await worker.waitFor((log) => log.msg === 'tool worker started', 'the start line');
    const logs = { worker: worker.lines, orchestrator: orchestrator.process.lines };
    for (const [app, lines] of Object.entries(logs)) {
      expect(lines.length, app).toBeGreaterThan(0);
      const repeated = lines.filter((line) => repeatedKeys(line).length > 0);
      expect(repeated, `${app} lines with a field twice`).toEqual([]);
    }
    // The scan itself finds a field twice.
    expect(repeatedKeys('{"a":1,"b":{"a":2},"c":"\\"a\\":","a":3}')).toEqual(['a']);
  });

  it('answers health probes with what they mean', async () => {
    const ready: Json = JSON.parse((await text(`${workerUrl}/health/ready`)).body);
    expect(ready).toMatchObject({
      status: 'ok',
      sessions: { search: { state: 'ready' }, notes: { state: 'ready' } },
    });
    expect((await text(`${workerUrl}/health/live`)).status).toBe(200);
    const probe = await text(`${orchestrator.url}/health/ready`);
    expect(probe.status).toBe(200);
    // Where the queues live, next to what was checked: on postgres there is no Redis to check.
    const orchestratorReady: Json = JSON.parse(probe.body);
    expect(orchestratorReady).toMatchObject({
      status: 'ok',
      backend: TEST_BACKEND,
      missing: [],
      postgres: 'ok',
    });
    if (TEST_BACKEND === 'redis') expect(orchestratorReady).toMatchObject({ redis: 'ok' });
    else expect(orchestratorReady).not.toHaveProperty('redis');
  });

  it('keeps the queue dashboard behind its password', async () => {
    expect((await text(`${orchestrator.url}/admin/queues`)).status).toBe(401);
    const wrong = `Basic ${Buffer.from('ops:wrong').toString('base64')}`;
    expect((await text(`${orchestrator.url}/admin/queues`, { authorization: wrong })).status).toBe(401);
    const right = `Basic ${Buffer.from('ops:correct horse battery').toString('base64')}`;
    const page = await text(`${orchestrator.url}/admin/queues`, { authorization: right });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<html');
    const api = await text(`${orchestrator.url}/admin/queues/api/queues`, { authorization: right });
    expect(api.status).toBe(200);
    expect(api.body).toContain('tools.{search}');
  });

  it('keeps the queue dashboard read-only: no retries, no concurrency changes, no new jobs', async () => {
    const right = `Basic ${Buffer.from('ops:correct horse battery').toString('base64')}`;
    // The search calls of beforeAll are the completed jobs there are (notes' call had bad arguments).
    const queue = (await deployment.dispatcher()).queue('search');
    const concurrency = await queue.getGlobalConcurrency();
    const [done] = await queue.getCompleted();
    expect(done?.id).toEqual(expect.any(String));
    const base = `${orchestrator.url}/admin/queues/api/queues/${encodeURIComponent('tools.{search}')}`;
    for (const [method, url, body] of [
      ['PUT', `${base}/concurrency`, { concurrency: 8 }],
      ['PUT', `${base}/${done?.id}/retry`, {}],
      ['PUT', `${base}/retry/completed`, {}],
      ['PUT', `${base}/pause`, {}],
      ['POST', `${base}/add`, { name: 'call', data: {} }],
      ['PUT', `${orchestrator.url}/admin/queues/api/queues/pause`, {}],
    ] as const) {
      const response = await fetch(url, {
        method,
        headers: { authorization: right, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status, `${method} ${url}`).toBe(405);
    }
    expect(await queue.getGlobalConcurrency()).toBe(concurrency);
    expect(await queue.getJobState(done?.id as string)).toBe('completed');
    expect(await queue.isPaused()).toBe(false);
  });

  it('reports a worker whose sessions are all down as not ready, with the reason', async () => {
    const lonely = await deployment.startWorker({ id: 'w-broken', servers: ['broken'], waitFor: [] });
    const port = (await lonely.waitFor((log) => log.msg === 'worker http listening', 'port')).port;
    await lonely.waitFor(
      (log) => log.msg === 'session state' && log.state === 'reconnecting',
      'the first failed connect',
    );
    const probe = await text(`http://127.0.0.1:${port}/health/ready`);
    expect(probe.status).toBe(503);
    const body: Json = JSON.parse(probe.body);
    expect(body.sessions.broken.state).not.toBe('ready');
    // The MCP server's stderr is for operators: in the session's stderrTail, never in lastError (teams see that).
    expect(body.sessions.broken.stderrTail).toContain('no database');
    await lonely.stop();
  });
});
