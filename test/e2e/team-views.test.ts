import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilAnnounced } from '../support/announcements.ts';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { exampleServerPath, tsxArgs } from '../support/paths.ts';

const SECRET = 'ALPHA-SECRET-ARGUMENT-4711';
const MARKER = 'ARGUMENT-MARKER-9925';

/**
 * The crashy example server behind a launcher that logs a team's arguments to stderr, as careless
 * servers do: its stderr tail ends up in the session's stderrTail (operators only) when it dies.
 */
function leakyServer(dir: string) {
  // .mts: the temp dir has no package.json saying "module", and the launcher uses top-level await.
  const launcher = join(dir, 'leaky.mts');
  writeFileSync(
    launcher,
    [
      `import { createCrashyServer } from ${JSON.stringify(exampleServerPath('crashy'))};`,
      `import { serve } from ${JSON.stringify(exampleServerPath('serve'))};`,
      `process.stderr.write('handling a call for team alpha: ${SECRET}\\n');`,
      'await serve(createCrashyServer);',
    ].join('\n'),
  );
  return { transport: 'stdio', command: process.execPath, args: tsxArgs(launcher) };
}

/** /v1/servers and /v1/tools show a team its own share of the fleet; operators see it whole. */
describe('team-scoped fleet views', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let searchers: ApiClient;
  let operator: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment(
      'team-views',
      (dir) => ({ search: exampleServer('search', { trusted: true }), leaky: leakyServer(dir) }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha] },
          beta: { apiKeys: [TEAM_KEYS.beta], tools: { allow: [] } },
          searchers: { apiKeys: [TEAM_KEYS.searchers], tools: { allow: ['search__*'] } },
        },
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-team-views');
    alpha = orchestrator.api('alpha');
    searchers = orchestrator.api('searchers');
    operator = orchestrator.api('operator');
    // Team alpha's call kills the server; its session's stderrTail then carries the stderr tail.
    const crashed = await alpha.submit({ kind: 'batch', calls: [{ tool: 'leaky__crash', arguments: {} }] });
    await alpha.finished(crashed.body.id);
    await untilAnnounced(
      deployment.redis,
      deployment.prefix,
      async () => JSON.stringify((await operator.request('GET', '/v1/servers')).body).includes(SECRET),
      "the leaky server's stderr in its session's stderrTail",
    );
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const servers = async (client: ApiClient): Promise<Json[]> => {
    const response = await client.request('GET', '/v1/servers');
    expect(response.status).toBe(200);
    return response.body.servers;
  };

  it('shows a team only the servers of its allowed tools, without stderr, workers or queues', async () => {
    const forSearchers = await servers(searchers);
    expect(forSearchers.map((server) => server.name)).toEqual(['search']);
    expect(forSearchers[0]).toMatchObject({ availability: 'ready', tools: 2, sessions: { ready: 1 } });
    const forAlpha = await servers(alpha);
    expect(forAlpha.map((server) => server.name)).toEqual(['leaky', 'search']);
    for (const view of [forSearchers, forAlpha]) {
      const text = JSON.stringify(view);
      expect(text).not.toContain(SECRET);
      expect(text).not.toMatch(/lastError|workerId|"queue"/);
    }
  });

  it('shows a team allowed no tools an empty fleet', async () => {
    const beta = orchestrator.api('beta');
    expect(await servers(beta)).toEqual([]);
    const tools = await beta.request('GET', '/v1/tools');
    expect(tools.status).toBe(200);
    expect(tools.body).toEqual({ tools: [], errors: [] });
  });

  it('gives an operator key every server with its sessions, last errors and queue depths', async () => {
    const all = await servers(operator);
    expect(all.map((server) => server.name).sort()).toEqual(['leaky', 'search']);
    const leaky = all.find((server) => server.name === 'leaky');
    expect(leaky.sessions[0].workerId).toEqual(expect.any(String));
    expect(leaky.sessions[0].stderrTail).toContain(SECRET);
    expect(leaky.sessions[0].lastError).not.toContain(SECRET);
    expect(leaky.queue).toMatchObject({ waiting: 0, active: 0 });
  });

  it("lists a team's own tools on /v1/tools and every tool for an operator", async () => {
    const names = async (client: ApiClient) =>
      (await client.request('GET', '/v1/tools')).body.tools.map((tool: Json) => tool.name).sort();
    expect(await names(searchers)).toEqual(['search__get_document', 'search__search']);
    expect(await names(operator)).toEqual(expect.arrayContaining(['leaky__crash', 'search__search']));
  });

  it('does not let an operator key act as a team', async () => {
    const submitted = await operator.submit({ kind: 'batch', calls: [] });
    // Known, but not a team's: refused with why (operators only read), not as an unknown key.
    expect(submitted.status).toBe(403);
    expect(submitted.body.type).toBe('urn:switchyard:problem:forbidden');
    expect((await operator.request('GET', '/v1/servers')).status).toBe(200);
    expect((await orchestrator.api().withKey('x'.repeat(30)).request('GET', '/v1/servers')).status).toBe(401);
  });

  it('keeps arguments out of every metric', async () => {
    const submitted = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: MARKER } }],
    });
    expect((await alpha.finished(submitted.body.id)).status).toBe('succeeded');
    const metrics = await (await fetch(`${orchestrator.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_tool_call_outcomes_total\{server="search",status="ok",team="alpha"\} 1/,
    );
    expect(metrics).not.toContain(MARKER);
    expect(metrics).not.toContain(SECRET);
    // Label names are a fixed, argument-free set.
    const labels = new Set([...metrics.matchAll(/[{,]([a-z_]+)="/g)].map((match) => match[1]));
    for (const label of labels)
      expect([
        'server',
        'status',
        'kind',
        'queue',
        'state',
        'le',
        'tool',
        'version',
        'major',
        'minor',
        'patch',
        'space',
        'type',
        // Team names come from the config; quota, event and result from fixed lists.
        'team',
        'quota',
        'event',
        'result',
        // HTTP server metrics: the method from a fixed list, the route template (never the URL), the code.
        'http_request_method',
        'http_route',
        'http_response_status_code',
      ]).toContain(label);
    // A route is its template: no job id or other value of a request's path reaches a label.
    for (const [, route] of metrics.matchAll(/http_route="([^"]*)"/g)) expect(route).not.toMatch(/job_|MARK/);
  });
});
