import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * Operator keys on the jobs API (issue 23): an operator reads every team's jobs (a team column, a
 * `team` filter, any job's view and events) and acts on none (a 403 naming why, on every door:
 * /v1 and /mcp); a team key still lists only its own jobs, and another team's job is a 404 to it.
 */
describe('jobs seen with an operator key', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let beta: ApiClient;
  let operator: ApiClient;
  let alphaJob: Json;
  let betaJob: Json;

  const batch = (ticket: string) => ({
    kind: 'batch',
    metadata: { ticket },
    calls: [{ tool: 'search__search', arguments: { query: ticket } }],
  });

  const expectReadOnlyRefusal = (response: ApiResponse<Json>) => {
    const where = `${response.status} ${JSON.stringify(response.body).slice(0, 400)}`;
    expect(response.status, where).toBe(403);
    expect(response.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
    expect(response.body, where).toMatchObject({ type: 'urn:switchyard:problem:forbidden', status: 403 });
    expect(response.body.detail, where).toMatch(/operator keys are read-only.*team's own API key/);
  };

  beforeAll(async () => {
    deployment = new Deployment('operator-jobs', () => ({
      search: exampleServer('search', { trusted: true }),
    }));
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-operator-jobs');
    alpha = orchestrator.api('alpha');
    beta = orchestrator.api('beta');
    operator = orchestrator.api('operator');
    const submittedAlpha = await alpha.submit(batch('OPS-A'));
    const submittedBeta = await beta.submit(batch('OPS-B'));
    expect([submittedAlpha.status, submittedBeta.status]).toEqual([201, 201]);
    alphaJob = await alpha.finished(submittedAlpha.body.id);
    betaJob = await beta.finished(submittedBeta.body.id);
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('says who a key is on /v1/whoami', async () => {
    expect((await alpha.request('GET', '/v1/whoami')).body).toEqual({ kind: 'team', team: 'alpha' });
    expect((await operator.request('GET', '/v1/whoami')).body).toEqual({ kind: 'operator' });
    const wrong = await alpha.withKey('w'.repeat(30)).request('GET', '/v1/whoami');
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail).toBe('unknown API key');
  });

  it("lists every team's jobs for an operator, each with its team, and narrows them with team=", async () => {
    const all = (await operator.request('GET', '/v1/jobs')).body.jobs as Json[];
    expect(all.map((job) => [job.id, job.team])).toEqual([
      [betaJob.id, 'beta'],
      [alphaJob.id, 'alpha'],
    ]);
    const onlyBeta = (await operator.request('GET', '/v1/jobs?team=beta')).body.jobs as Json[];
    expect(onlyBeta.map((job) => job.id)).toEqual([betaJob.id]);
    // Filters and paging work across teams as within one.
    const page = (await operator.request('GET', '/v1/jobs?limit=1&status=succeeded')).body;
    expect(page.jobs.map((job: Json) => job.id)).toEqual([betaJob.id]);
    const next = (
      await operator.request('GET', `/v1/jobs?limit=1&status=succeeded&cursor=${page.nextCursor}`)
    ).body;
    expect(next.jobs.map((job: Json) => job.id)).toEqual([alphaJob.id]);
    expect(next.nextCursor).toBeNull();
  });

  it("lets an operator read any team's job and its events", async () => {
    const read = await operator.request('GET', `/v1/jobs/${alphaJob.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: alphaJob.id, team: 'alpha', status: 'succeeded' });
    expect(read.body.toolCalls).toHaveLength(1);
    const events = await fetch(`${orchestrator.url}/v1/jobs/${betaJob.id}/events`, {
      headers: { authorization: `Bearer ${TEAM_KEYS.operator}` },
    });
    expect(events.status).toBe(200);
    expect(await events.text()).toMatch(/event: status\n.*"status":"succeeded"/);
  });

  it('refuses every write from an operator key with a 403 naming why', async () => {
    expectReadOnlyRefusal(await operator.submit(batch('OPS-X')));
    expectReadOnlyRefusal(await operator.request('POST', `/v1/jobs/${alphaJob.id}/cancel`));
    expectReadOnlyRefusal(await operator.request('DELETE', `/v1/jobs/${alphaJob.id}`));
    expectReadOnlyRefusal(
      await operator.request('POST', `/v1/jobs/${alphaJob.id}/input`, { toolCallId: 'c', action: 'decline' }),
    );
    expectReadOnlyRefusal(
      await operator.request('POST', `/v1/jobs/${alphaJob.id}/approvals/c`, {
        decision: 'approve',
        digest: `sha256:${'0'.repeat(64)}`,
      }),
    );
    // /mcp submits calls too: the same refusal, as a JSON-RPC error.
    const mcp = await fetch(`${orchestrator.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEAM_KEYS.operator}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(mcp.status).toBe(403);
    expect(((await mcp.json()) as Json).error.message).toMatch(/operator keys are read-only/);
    // Nothing changed: no job was added, none cancelled or deleted.
    expect((await operator.request('GET', '/v1/jobs')).body.jobs).toHaveLength(2);
    expect((await alpha.job(alphaJob.id)).status).toBe('succeeded');
  });

  it("keeps a team to its own jobs: another team's job is a 404, naming another team a 403", async () => {
    const own = (await alpha.request('GET', '/v1/jobs')).body.jobs as Json[];
    expect(own.map((job) => [job.id, job.team])).toEqual([[alphaJob.id, 'alpha']]);
    expect((await alpha.request('GET', '/v1/jobs?team=alpha')).body.jobs).toHaveLength(1);
    const other = await alpha.request('GET', `/v1/jobs/${betaJob.id}`);
    expect(other.status).toBe(404);
    expect(other.body.detail).toBe(`no job ${betaJob.id}`);
    expect((await alpha.request('GET', `/v1/jobs/${betaJob.id}/events`)).status).toBe(404);
    expect((await alpha.request('POST', `/v1/jobs/${betaJob.id}/cancel`)).status).toBe(404);
    const named = await alpha.request('GET', '/v1/jobs?team=beta');
    expect(named.status).toBe(403);
    expect(named.body.detail).toMatch(/a team's key lists only its own jobs \(team alpha\)/);
  });
});
