import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { entryPoint, REPO_ROOT, tsxArgs } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import { StreamCuttingProxy } from '../support/stream-cutting-proxy.ts';

/** The exit codes README documents for `switchyard`. */
const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  completedWithErrors: 3,
  cancelled: 4,
  apiError: 6,
  unreachable: 7,
};
/** A team with its own model key (teams.<team>.models), beside the usual ones; `keys` are never shown. */
const MODELLED_KEY = 'modelled-key-0000000000005';
const MODEL_KEYS = { team: 'sk-cli-test-team-model-key-1', deployment: 'sk-cli-test-deployment-model-key-2' };
/** The CLI as the suites run the apps: from sources under tsx, or dist/ with SWITCHYARD_COMPILED=1. */
const CLI = entryPoint('apps/cli', 'main');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `switchyard` against the live deployment (a real orchestrator, worker, MCP servers, Redis and
 * PostgreSQL), run as a child process the way a person or a script runs it: submit → watch → exit
 * code, --json output parsed, list/get/cancel, bad usage, a bad key, an unreachable API.
 */
describe('the switchyard CLI', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const run = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
    new Promise((done) => {
      execFile(
        process.execPath,
        tsxArgs(CLI, ...args),
        {
          cwd: REPO_ROOT,
          // Bounds a hang only: the child is killed then, so no CLI process outlives its test.
          timeout: 90_000,
          env: {
            ...process.env,
            SWITCHYARD_URL: orchestrator.url,
            SWITCHYARD_API_KEY: TEAM_KEYS.alpha,
            ...env,
          },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          done({ code, stdout, stderr });
        },
      );
    });
  const jsonLines = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string | null; event: string; data: Record<string, unknown> });

  beforeAll(async () => {
    deployment = new Deployment(
      'cli',
      (dir) => ({
        search: exampleServer('search', { trusted: true }),
        slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, trusted: true }),
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 50 },
          searchers: { apiKeys: [TEAM_KEYS.searchers], tools: { allow: ['search__*'] } },
          modelled: {
            apiKeys: [MODELLED_KEY],
            models: {
              openai: { apiKey: MODEL_KEYS.team },
              default: { provider: 'openai', name: 'gpt-4o-mini' },
              allow: ['openai', 'scripted'],
            },
          },
        },
      },
    );
    // The deployment's models, whatever the machine's environment: openai by key, no anthropic, no default.
    Object.assign(deployment.processEnv, {
      OPENAI_API_KEY: MODEL_KEYS.deployment,
      ANTHROPIC_API_KEY: '',
      SWITCHYARD_MODEL_PROVIDER: '',
      SWITCHYARD_MODEL_NAME: '',
    });
    await deployment.startWorker({ id: 'w-cli' });
    orchestrator = await deployment.startOrchestrator('o-cli');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('submits with flags and watches to the end: progress lines per call, exit 0 for succeeded', async () => {
    const result = await run([
      'jobs',
      'submit',
      '--tool',
      'search__search',
      '--args',
      '{"query":"tracing"}',
      '--tool',
      'search__search',
      '--args',
      '{"query":"queues"}',
      '--watch',
    ]);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^submitted job_[0-9a-f-]{36} batch queued/);
    expect(lines.filter((line) => / → search__search \[.+\] dispatched to search$/.test(line))).toHaveLength(
      2,
    );
    const finished = lines.filter((line) => / ✓ search__search \[.+\] ok on search by w-cli \(/.test(line));
    expect(finished).toHaveLength(2);
    expect(finished[0]).toMatch(/executed yes, attempts 1, queued \d+ ms, ran \d+ ms\)$/);
    expect(lines.at(-1)).toMatch(/job succeeded$/);
    expect(result.stderr).toMatch(/batch succeeded — 2 calls \(ok 2\)/);
  });

  it("prints a long call's progress while it runs: share done and the server's message, rising, before its outcome", async () => {
    const result = await run([
      'jobs',
      'submit',
      '--tool',
      'slow__sleep',
      '--args',
      '{"ms":2000,"progressEveryMs":100}',
      '--watch',
    ]);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    const lines = result.stdout.trim().split('\n');
    const progress = lines
      .map((line, index) => ({
        index,
        match: / … slow__sleep \[(.+)\] (\d+)% slept (\d+) of 2000 ms$/.exec(line),
      }))
      .filter((entry) => entry.match !== null);
    // 20 notifications over 2 s, throttled to about one line per 500 ms.
    expect(progress.length, result.stdout).toBeGreaterThanOrEqual(3);
    expect(progress.length).toBeLessThanOrEqual(6);
    const shares = progress.map((entry) => Number(entry.match?.[2]));
    expect(shares).toEqual([...shares].sort((a, b) => a - b));
    expect(new Set(shares).size).toBe(shares.length);
    expect(Number(progress[0]?.match?.[3]) / 20).toBe(shares[0]);
    const dispatched = lines.findIndex((line) => / → slow__sleep \[.+\] dispatched to slow$/.test(line));
    const finished = lines.findIndex((line) => / ✓ slow__sleep \[.+\] ok on slow/.test(line));
    expect(dispatched).toBeGreaterThanOrEqual(0);
    expect(progress[0]?.index).toBeGreaterThan(dispatched);
    expect(progress.at(-1)?.index).toBeLessThan(finished);
  });

  it('exits 3 when a watched batch completes with errors, and prints the failing call', async () => {
    const result = await run([
      'jobs',
      'submit',
      '--tool',
      'search__search',
      '--args',
      '{"query":"fine"}',
      '--tool',
      'search__get_document',
      '--args',
      '{"id":"no-such-document"}',
      '--watch',
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(EXIT.completedWithErrors);
    expect(result.stdout).toMatch(/ ✗ search__get_document \[.+\] tool_error on search/);
    expect(result.stdout.trim().split('\n').at(-1)).toMatch(/job completed_with_errors$/);
  });

  it('speaks JSON for scripts: submit from a YAML file, watch as JSON lines, get and list', async () => {
    const file = deployment.path('job.yaml');
    writeFileSync(
      file,
      [
        'kind: batch',
        'calls:',
        '  - tool: search__search',
        '    arguments: { query: yaml }',
        'metadata:',
        '  ticket: OPS-42',
      ].join('\n'),
    );
    const submitted = await run(['--json', 'jobs', 'submit', file, '--metadata', 'run=cli-json']);
    expect(submitted.code, submitted.stderr).toBe(EXIT.ok);
    const job = JSON.parse(submitted.stdout);
    expect(job).toMatchObject({ kind: 'batch', metadata: { ticket: 'OPS-42', run: 'cli-json' } });

    const watched = await run(['jobs', 'watch', job.id, '--json']);
    expect(watched.code, watched.stderr).toBe(EXIT.ok);
    const events = jsonLines(watched.stdout);
    expect(events.map((event) => event.event)).toEqual(
      expect.arrayContaining(['status', 'tool_call.dispatched', 'tool_call.finished']),
    );
    expect(events.at(-1)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);

    // Resuming after an event replays only what came after it.
    const second = events[1]?.id as string;
    const resumed = jsonLines((await run(['jobs', 'watch', job.id, '--json', '--after', second])).stdout);
    expect(resumed.map((event) => event.id)).toEqual(events.slice(2).map((event) => event.id));

    const shown = await run(['jobs', 'get', job.id, '--json']);
    expect(shown.code).toBe(EXIT.ok);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      id: job.id,
      status: 'succeeded',
      summary: { calls: 1, pending: 0, byStatus: { ok: 1 } },
      toolCalls: [{ tool: 'search__search', server: 'search', workerId: 'w-cli', status: 'ok' }],
    });

    const listed = await run([
      'jobs',
      'list',
      '--json',
      '--metadata',
      'run=cli-json',
      '--status',
      'succeeded',
    ]);
    expect(listed.code, listed.stderr).toBe(EXIT.ok);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      jobs: [{ id: job.id, status: 'succeeded' }],
      nextCursor: null,
    });

    const human = await run(['jobs', 'get', job.id]);
    expect(human.stdout).toMatch(new RegExp(`^${job.id} batch succeeded — 1 call \\(ok 1\\)`));
    expect(human.stdout).toMatch(/search__search\s+search\s+ok\s+yes\s+1\s+w-cli/);
  });

  it('counts the calls of a running job in words: one call, still pending', async () => {
    const submitted = await orchestrator
      .api('alpha')
      .submit({ kind: 'batch', calls: [{ tool: 'slow__sleep', arguments: { ms: 2_000 } }] });
    const id = submitted.body.id as string;
    try {
      await orchestrator.api('alpha').events(id, (event) => event.event === 'tool_call.dispatched');
      const shown = await run(['jobs', 'get', id]);
      expect(shown.code, shown.stderr).toBe(EXIT.ok);
      expect(shown.stdout.split('\n')[0]).toBe(`${id} batch running — 1 call (pending 1)`);
    } finally {
      await run(['jobs', 'cancel', id]);
    }
  });

  it('cancels a running job; a watcher of it exits 4', async () => {
    const calls = Array.from({ length: 6 }, () => ({ tool: 'slow__sleep', arguments: { ms: 1_000 } }));
    const file = deployment.path('slow.json');
    writeFileSync(file, JSON.stringify({ kind: 'batch', calls }));
    const submitted = JSON.parse((await run(['jobs', 'submit', file, '--json'])).stdout);
    const watcher = run(['jobs', 'watch', submitted.id]);
    // Cancel once the first call has been dispatched (the job runs): read from the API's own stream.
    await orchestrator.api('alpha').events(submitted.id, (event) => event.event === 'tool_call.dispatched');
    const cancelled = await run(['jobs', 'cancel', submitted.id]);
    expect(cancelled.code, cancelled.stderr).toBe(EXIT.ok);
    expect(cancelled.stdout).toMatch(new RegExp(`^${submitted.id} batch cancelled`));
    const watched = await watcher;
    expect(watched.code, watched.stdout + watched.stderr).toBe(EXIT.cancelled);
    expect(watched.stdout.trim().split('\n').at(-1)).toMatch(/job cancelled$/);
  });

  it('watch resumes after dropped connections with Last-Event-ID: every event once, in order', async () => {
    const proxy = await StreamCuttingProxy.start(orchestrator.url, 3);
    try {
      const calls = Array.from({ length: 4 }, () => ({ tool: 'slow__sleep', arguments: { ms: 700 } }));
      const submitted = await orchestrator.api('alpha').submit({ kind: 'batch', calls });
      const id = submitted.body.id as string;
      const watched = await run(['jobs', 'watch', id, '--json'], { SWITCHYARD_URL: proxy.url });
      expect(watched.code, watched.stderr).toBe(EXIT.ok);
      const all = await orchestrator.api('alpha').events(id);
      const seen = jsonLines(watched.stdout);
      // Every stored event once, in order; a call's progress is stored only as its newest (semantics
      // §17), so a watcher live at the time also saw progress that a later read no longer returns.
      const lasting = (event: { event: string }) => event.event !== 'tool_call.progress';
      expect(seen.filter(lasting).map((event) => Number(event.id))).toEqual(
        all.filter(lasting).map((event) => event.id),
      );
      const seenIds = seen.map((event) => Number(event.id));
      expect(seenIds).toEqual([...new Set(seenIds)].sort((a, b) => a - b));
      // Cut three times, it reconnected three times, each time after the last event it had.
      expect(watched.stderr.match(/connection lost \(.*\); resuming after event \d+/g)).toHaveLength(3);
      const resumedAfter = proxy.lastEventIds.slice(1).map(Number);
      expect(proxy.lastEventIds[0]).toBeUndefined();
      expect(resumedAfter).toHaveLength(3);
      expect(resumedAfter).toEqual([...resumedAfter].sort((a, b) => a - b));
    } finally {
      await proxy.close();
    }
  });

  it('lists tools and servers, for people and as JSON', async () => {
    const tools = await run(['tools']);
    expect(tools.code, tools.stderr).toBe(EXIT.ok);
    expect(tools.stdout).toMatch(/^name\s+availability\s+idempotent\s+description/);
    expect(tools.stdout).toMatch(/search__search\s+ready/);
    const toolList = JSON.parse((await run(['tools', '--json'])).stdout);
    expect(toolList.tools.map((tool: { name: string }) => tool.name)).toContain('slow__sleep');
    const servers = await run(['servers', '--api-key', TEAM_KEYS.operator]);
    expect(servers.code, servers.stderr).toBe(EXIT.ok);
    expect(servers.stdout).toMatch(/search\s+stdio\s+ready/);
    const serverList = JSON.parse((await run(['servers', '--json'])).stdout);
    expect(serverList.servers.map((server: { name: string }) => server.name).sort()).toEqual([
      'search',
      'slow',
    ]);
  });

  it('lists the model providers a team may name, whose keys each uses and its default, never a key', async () => {
    const deploymentKeys = await run(['models']);
    expect(deploymentKeys.code, deploymentKeys.stderr).toBe(EXIT.ok);
    expect(deploymentKeys.stdout).toMatch(/^team alpha, no default model: an agent job names one/);
    expect(deploymentKeys.stdout).toMatch(
      /\nprovider\s+keys\n-+\s+-+\nopenai\s+deployment\nollama\s+none\nscripted\s+none\n$/,
    );

    const own = await run(['models'], { SWITCHYARD_API_KEY: MODELLED_KEY });
    expect(own.code, own.stderr).toBe(EXIT.ok);
    expect(own.stdout).toMatch(/^team modelled, default model openai:gpt-4o-mini\n/);
    expect(own.stdout).toMatch(/\nopenai\s+team\nscripted\s+none\n$/);
    const json = await run(['models', '--json'], { SWITCHYARD_API_KEY: MODELLED_KEY });
    expect(json.code, json.stderr).toBe(EXIT.ok);
    expect(JSON.parse(json.stdout)).toEqual({
      team: 'modelled',
      default: { provider: 'openai', name: 'gpt-4o-mini' },
      providers: [
        { provider: 'openai', keys: 'team' },
        { provider: 'scripted', keys: 'none' },
      ],
    });
    for (const output of [deploymentKeys, own, json]) {
      for (const key of Object.values(MODEL_KEYS)) expect(output.stdout + output.stderr).not.toContain(key);
    }

    // A team's view only: an operator key is refused as the API refuses it.
    const operator = await run(['models', '--json'], { SWITCHYARD_API_KEY: TEAM_KEYS.operator });
    expect(operator.code).toBe(EXIT.apiError);
    expect(JSON.parse(operator.stderr)).toMatchObject({
      status: 403,
      problem: { type: 'urn:switchyard:problem:forbidden' },
    });
    expect(operator.stdout).toBe('');
  });

  it('exits 2 on bad usage, naming the problem', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['jobs', 'submit'], /nothing to submit/],
      [['jobs', 'submit', '--tool', 'search__search', '--args', '{oops'], /--args #1: not JSON/],
      [['jobs', 'submit', '--tool', 'search__search', '--args', '[1]'], /--args #1: must be a JSON object/],
      [['jobs', 'submit', resolve(REPO_ROOT, 'no-such-job.yaml')], /job file .*no-such-job\.yaml: ENOENT/],
      [['jobs', 'submit', '--agent'], /--agent needs --input/],
      [
        ['jobs', 'submit', '--agent', '--input', 'hi', '--model', 'gpt'],
        /--model "gpt": write <provider>:<name>/,
      ],
      [['jobs', 'watch'], /missing required argument 'id'/],
      [['jobs', 'list', '--status', 'done'], /argument 'done' is invalid. Allowed choices are/],
      [['jobs', 'list', '--limit', 'many'], /--limit.*must be a whole number/],
      [['jobs', 'frobnicate'], /unknown command 'frobnicate'/],
      [
        ['tools', '--url', 'ftp://example'],
        /--url \/ SWITCHYARD_URL: "ftp:\/\/example" is not an http\(s\) URL/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(EXIT.usage);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stdout, args.join(' ')).toBe('');
    }
    const noKey = await run(['tools'], { SWITCHYARD_API_KEY: '' });
    expect(noKey.code).toBe(EXIT.usage);
    expect(noKey.stderr).toMatch(/no API key: give --api-key or set SWITCHYARD_API_KEY/);
  });

  it('says clearly when the API refuses (bad key, unknown job, unknown tool) or cannot be reached', async () => {
    const badKey = await run(['tools', '--api-key', 'not-a-real-key-at-all']);
    expect(badKey.code).toBe(EXIT.apiError);
    expect(badKey.stderr).toMatch(/^error: GET \/v1\/tools: 401 Missing or unknown API key/);
    const badKeyJson = await run(['tools', '--json', '--api-key', 'not-a-real-key-at-all']);
    expect(JSON.parse(badKeyJson.stderr)).toMatchObject({
      status: 401,
      problem: { type: 'urn:switchyard:problem:unauthorized', status: 401 },
    });
    expect(badKeyJson.stdout).toBe('');

    const missing = await run(['jobs', 'get', 'job_00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(EXIT.apiError);
    expect(missing.stderr).toMatch(/404 No such resource/);

    const typo = await run(['jobs', 'submit', '--tool', 'search__serch', '--json']);
    expect(typo.code).toBe(EXIT.apiError);
    expect(JSON.parse(typo.stderr).problem).toMatchObject({ type: 'urn:switchyard:problem:unknown-tools' });
    expect(typo.stderr).toMatch(/search__search/);

    const unreachable = await run(['tools', '--url', `http://127.0.0.1:${await freePort()}`]);
    expect(unreachable.code).toBe(EXIT.unreachable);
    expect(unreachable.stderr).toMatch(
      /^error: GET \/v1\/tools: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/,
    );
  });

  it('says each refusal once, and refuses a tool the team may not call as it refuses an unknown one', async () => {
    const badId = await run(['jobs', 'get', 'not-a-job']);
    expect(badId.code).toBe(EXIT.apiError);
    expect(badId.stderr.trim()).toBe(
      'error: GET /v1/jobs/not-a-job: 400 The request is invalid: invalid job id: (root): not a job id',
    );
    const badModel = await run(['jobs', 'submit', '--agent', '--input', 'hi', '--model', 'anthropic:claude']);
    expect(badModel.code).toBe(EXIT.apiError);
    expect(badModel.stderr.trim()).toBe(
      'error: POST /v1/jobs: 400 The request is invalid: model: provider "anthropic" needs ANTHROPIC_API_KEY',
    );
    // searchers may call search__* only: slow__sleep exists, slow__nothing does not. A team sees only
    // the tools its filters allow (docs/semantics.md §9), so both get the same words, and neither
    // claims the tool does not exist.
    const searchers = { SWITCHYARD_API_KEY: TEAM_KEYS.searchers };
    const denied = await run(['jobs', 'submit', '--tool', 'slow__sleep'], searchers);
    const unknown = await run(['jobs', 'submit', '--tool', 'slow__nothing'], searchers);
    for (const [refusal, name] of [
      [denied, 'slow__sleep'],
      [unknown, 'slow__nothing'],
    ] as const) {
      expect(refusal.code).toBe(EXIT.apiError);
      expect(refusal.stderr.trim()).toBe(
        `error: POST /v1/jobs: 400 The job names tools this team cannot call: not in this team's catalog (unknown, or not allowed by its filters): ${name}`,
      );
    }
  });

  it('is generated from the document this orchestrator serves', async () => {
    const served = await orchestrator.api('alpha').request('GET', '/openapi.json');
    const committed = JSON.parse(readFileSync(resolve(REPO_ROOT, 'libs/client/openapi.json'), 'utf8'));
    expect(served.body, 'run npm run generate -w libs/client').toEqual(committed);
  });
});
