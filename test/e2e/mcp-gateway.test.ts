import { randomBytes, randomUUID } from 'node:crypto';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { inspectorCli } from '../support/inspector-cli.ts';
import { waitForLedger } from '../support/ledger.ts';
import {
  connectGateway,
  type GatewayClient,
  type HeardLog,
  REVISIONS,
  type Revision,
} from '../support/mcp-clients.ts';
import { REDIS_CLUSTER_NODES } from '../support/redis.ts';

/**
 * On Redis Cluster each log line's PUBLISH may enter through another node and crosses the cluster bus,
 * while the call's outcome arrives from another node's stream: lines can arrive out of order, or after the
 * result and then not be relayed (docs/semantics.md §16). The redis and postgres passes run these tests.
 */
const LOGS_BEFORE_RESULT = REDIS_CLUSTER_NODES === '';

const OUTCOME = 'io.switchyard/outcome';
const IDEMPOTENCY = 'io.switchyard/idempotency-key';
/** The one browser origin this deployment lists in orchestrator.mcp.allowedOrigins. */
const ALLOWED_ORIGIN = 'https://agents.example.com';

/**
 * docs/architecture.md (gateway): the fleet as one MCP endpoint, through both MCP client SDKs — the v1
 * SDK speaking 2025-11-25 and the v2 client pinned to 2026-07-28.
 */
describe('the /mcp gateway', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const clients: GatewayClient[] = [];

  beforeAll(async () => {
    deployment = new Deployment(
      'mcp-gateway',
      (dir) => ({
        search: exampleServer('search', { trusted: true }),
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
        // Short per-call timeout, for the timeout case.
        slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, timeoutMs: 1_500 }),
        // The same server with room to be cancelled before any timeout.
        patient: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/patient.jsonl` }, timeoutMs: 120_000 }),
        // A 2026-07-28-only server: it logs only at the level each request's _meta names.
        modern: exampleServer('modern'),
        // Two calls at once on one session: whose log message is whose cannot be known.
        shared: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/shared.jsonl` }, concurrency: 2 }),
      }),
      { orchestrator: { mcp: { allowedOrigins: [ALLOWED_ORIGIN] } } },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-mcp');
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await deployment?.close();
  });

  const connect = async (
    revision: Revision,
    key: string = TEAM_KEYS.alpha,
    options: { onLog?: (log: HeardLog) => void } = {},
  ) => {
    const client = await connectGateway(orchestrator.url, key, revision, options);
    clients.push(client);
    return client;
  };

  /** The gateway jobs of one tool, from the deployment's own schema. */
  const mcpJobs = async (tool: string): Promise<Json[]> => {
    const client = new pg.Client({ connectionString: deployment.databaseUrl });
    await client.connect();
    try {
      const result = await client.query(
        `SELECT j.id, j.status, c.status AS "callStatus", c.outcome FROM ${deployment.schema}.jobs j
         JOIN ${deployment.schema}.tool_calls c ON c.job_id = j.id
         WHERE j.kind = 'mcp' AND j.request->>'tool' = $1 ORDER BY j.created_at`,
        [tool],
      );
      return result.rows;
    } finally {
      await client.end();
    }
  };

  const untilJob = async (tool: string, done: (jobs: Json[]) => boolean, what: string): Promise<Json[]> => {
    const until = Date.now() + 60_000;
    for (;;) {
      const jobs = await mcpJobs(tool);
      if (done(jobs)) return jobs;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(jobs)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${orchestrator.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...headers,
      },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });

  for (const revision of REVISIONS) {
    describe(`MCP ${revision}`, () => {
      it.runIf(LOGS_BEFORE_RESULT)(
        "relays the tool's log messages at the level the call asks for, bounded, before its result",
        async () => {
          const heard: HeardLog[] = [];
          const client = await connect(revision, TEAM_KEYS.alpha, { onLog: (log) => heard.push(log) });
          const lines = [
            { level: 'debug', text: `${revision} quiet` },
            { level: 'info', text: `${revision} told` },
            { level: 'warning', text: `${revision} warned` },
            { level: 'error', text: 'x'.repeat(10_000) },
          ];
          const call = (level?: string) =>
            client.callTool({
              name: 'patient__log_lines',
              arguments: { lines, gapMs: 5 },
              ...(level ? { _meta: { 'io.modelcontextprotocol/logLevel': level } } : {}),
            });
          const asked: Json = await call('warning');
          expect(asked.content[0].text).toBe('sent 4 log message(s)');
          // Heard before the result: warning and error only, the long one cut with a marker.
          expect(heard.map((log) => log.level)).toEqual(['warning', 'error']);
          expect(heard[0]).toEqual({ level: 'warning', logger: 'slow', data: `${revision} warned` });
          expect(String(heard[1]?.data)).toMatch(/^"x{1000,}.*… \[cut: 10002 characters of JSON\]$/);
          expect(String(heard[1]?.data).length).toBeLessThanOrEqual(4_000);
          heard.length = 0;
          // No level named: 2026-07-28 sends none (the spec's MUST NOT); 2025-11-25 sends info and up.
          await call();
          expect(heard.map((log) => log.data)).toEqual(
            revision === '2026-07-28' ? [] : [`${revision} told`, `${revision} warned`, expect.any(String)],
          );
        },
      );

      it.runIf(LOGS_BEFORE_RESULT)(
        'asks a 2026-07-28 server for the logs at the level the /mcp call wants',
        async () => {
          const heard: HeardLog[] = [];
          const client = await connect(revision, TEAM_KEYS.alpha, { onLog: (log) => heard.push(log) });
          const lines = [
            { level: 'debug', text: 'fine detail' },
            { level: 'notice', text: 'worth knowing' },
            { level: 'critical', text: 'on fire' },
          ];
          const call = (level?: string) =>
            client.callTool({
              name: 'modern__log',
              arguments: { lines },
              ...(level ? { _meta: { 'io.modelcontextprotocol/logLevel': level } } : {}),
            });
          // The server sends nothing unless the worker's request names a level: these came because it did.
          await call('notice');
          expect(heard).toEqual([
            { level: 'notice', logger: 'modern', data: 'worth knowing' },
            { level: 'critical', logger: 'modern', data: 'on fire' },
          ]);
          heard.length = 0;
          await call('debug');
          expect(heard.map((log) => log.data)).toEqual(['fine detail', 'worth knowing', 'on fire']);
        },
      );

      it("lists the team's tools with their schemas and annotations", async () => {
        const client = await connect(revision);
        const { tools } = await client.listTools();
        const names = tools.map((tool) => tool.name);
        expect(names).toEqual(expect.arrayContaining(['search__search', 'notes__add_note', 'slow__sleep']));
        const sleep = tools.find((tool) => tool.name === 'slow__sleep') as Json;
        expect(sleep.inputSchema.properties.ms).toBeDefined();
        expect(sleep.annotations).toMatchObject({ readOnlyHint: true });
        expect(sleep.outputSchema.properties.slept).toBeDefined();
      });

      it('calls a tool and returns its result, recorded as a job of kind mcp in the trace the client sent', async () => {
        const client = await connect(revision);
        const traceId = randomBytes(16).toString('hex');
        const result: Json = await client.callTool({
          name: 'slow__sleep',
          arguments: { ms: 10 },
          _meta: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
        });
        expect(result.isError).toBeFalsy();
        expect(result.content[0].text).toBe('slept 10 ms');
        expect(result.structuredContent).toEqual({ slept: 10 });
        const outcome = result._meta[OUTCOME];
        expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', traceId });
        const job = await orchestrator.api('alpha').request('GET', `/v1/jobs/${outcome.jobId}`);
        expect(job.status).toBe(200);
        expect(job.body).toMatchObject({ kind: 'mcp', status: 'succeeded', traceId });
        expect(job.body.toolCalls).toHaveLength(1);
        expect(job.body.toolCalls[0]).toMatchObject({ tool: 'slow__sleep', status: 'ok' });
        // Listed with the team's jobs, and found by its kind.
        const listed = await orchestrator.api('alpha').request('GET', '/v1/jobs?kind=mcp&limit=200');
        expect(listed.status).toBe(200);
        expect(listed.body.jobs.map((listedJob: Json) => listedJob.id)).toContain(outcome.jobId);
        // The server received the call in the client's trace.
        const rows = await waitForLedger(deployment.path('slow.jsonl'), (all) =>
          all.some((row) => String(row.traceparent).includes(traceId)),
        );
        expect(rows.some((row) => String(row.traceparent).includes(traceId))).toBe(true);
      });

      it("passes the server's own isError result through", async () => {
        const client = await connect(revision);
        const result: Json = await client.callTool({ name: 'notes__delete_note', arguments: { id: 'nope' } });
        expect(result.isError).toBe(true);
        expect(result.content[0].text).toContain('Note not found');
        expect(result._meta[OUTCOME]).toMatchObject({ status: 'tool_error', executed: 'yes' });
      });

      it('answers invalid arguments with an isError result saying the tool did not run', async () => {
        const client = await connect(revision);
        const result: Json = await client.callTool({ name: 'slow__sleep', arguments: { ms: 'soon' } });
        expect(result.isError).toBe(true);
        expect(result.content[0].text).toMatch(
          /^\[invalid_arguments\] Invalid arguments for slow__sleep: .*ms/,
        );
        expect(result.content[0].text).toContain('The tool did not run.');
        expect(result._meta[OUTCOME]).toMatchObject({ status: 'invalid_arguments', executed: 'no' });
      });

      it('answers a timeout with an isError result saying the tool may have run', async () => {
        const client = await connect(revision);
        const result: Json = await client.callTool({ name: 'slow__hang', arguments: {} }, undefined, {
          timeout: 60_000,
        });
        expect(result.isError).toBe(true);
        expect(result.content[0].text).toMatch(/^\[timeout\] /);
        expect(result.content[0].text).toContain('may or may not have run');
        expect(result._meta[OUTCOME]).toMatchObject({ status: 'timeout', executed: 'unknown' });
      });

      it("forwards the server's progress notifications", async () => {
        const client = await connect(revision);
        const seen: Array<{ progress: number; total?: number }> = [];
        const result: Json = await client.callTool(
          { name: 'slow__sleep', arguments: { ms: 800, progressEveryMs: 100 } },
          undefined,
          { onprogress: (progress) => seen.push(progress), timeout: 60_000 },
        );
        expect(result.structuredContent).toEqual({ slept: 800 });
        expect(seen.length).toBeGreaterThan(0);
        expect(seen.every((progress) => progress.total === 800)).toBe(true);
        const values = seen.map((progress) => progress.progress);
        expect(values).toEqual([...values].sort((a, b) => a - b));
      });

      it("thins a chatty server's progress to one notification per call per 100 ms, the newest each time", async () => {
        const client = await connect(revision);
        const seen: number[] = [];
        // A notification about every millisecond, for 1.5 s of sleep: over a thousand from the server.
        const startedAt = performance.now();
        const result: Json = await client.callTool(
          { name: 'patient__sleep', arguments: { ms: 1_500, progressEveryMs: 1 } },
          undefined,
          { onprogress: (progress) => seen.push(progress.progress), timeout: 60_000 },
        );
        expect(result.structuredContent).toEqual({ slept: 1_500 });
        expect(seen.length).toBeGreaterThanOrEqual(5);
        // Its 1 ms steps take longer than 1 ms each: the bound is the call's own time, not the sleep's.
        const tookMs = performance.now() - startedAt;
        expect(seen.length).toBeLessThanOrEqual(Math.ceil(tookMs / 100) + 2);
        expect(seen).toEqual([...seen].sort((a, b) => a - b));
      });

      it("cancels the call on the server when the client cancels, and records the job's end", async () => {
        const client = await connect(revision);
        const controller = new AbortController();
        const ledgerRows = (phase: string) =>
          readLedger(deployment.path('patient.jsonl')).filter((row) => row.phase === phase).length;
        // Counted apart: other tests' calls to this server start without being cancelled.
        const before = ledgerRows('start');
        const cancelledBefore = ledgerRows('cancelled');
        const jobsBefore = (await mcpJobs('patient__hang')).length;
        const call = client.callTool({ name: 'patient__hang', arguments: {} }, undefined, {
          signal: controller.signal,
          timeout: 120_000,
        });
        call.catch(() => undefined);
        await waitForLedger(
          deployment.path('patient.jsonl'),
          (rows) => rows.filter((row) => row.phase === 'start').length > before,
          60_000,
        );
        controller.abort('the user changed their mind');
        await expect(call).rejects.toThrow();
        // The cancel reached the MCP server (notifications/cancelled from the worker)...
        await waitForLedger(
          deployment.path('patient.jsonl'),
          (rows) => rows.filter((row) => row.phase === 'cancelled').length > cancelledBefore,
          60_000,
        );
        // ...and the job ended cancelled, its call settled with what really happened.
        const jobs = await untilJob(
          'patient__hang',
          (all) => all.length > jobsBefore && all.every((job) => job.callStatus !== 'dispatched'),
          'the cancelled call to settle',
        );
        expect(jobs.at(-1)).toMatchObject({ status: 'cancelled', callStatus: 'cancelled' });
      });

      it("shows another team only its own tools and refuses the others' by name", async () => {
        const client = await connect(revision, TEAM_KEYS.searchers);
        const { tools } = await client.listTools();
        expect(tools.length).toBeGreaterThan(0);
        expect(tools.every((tool) => tool.name.startsWith('search__'))).toBe(true);
        await expect(client.callTool({ name: 'notes__add_note', arguments: { text: 'x' } })).rejects.toThrow(
          /No tool named "notes__add_note" is available to this job \(unknown, or not allowed by its filters\); the call was not sent/,
        );
      });

      it('runs a write once when a client retries with the same idempotency key after losing the stream', async () => {
        const key = randomUUID();
        const text = `once ${revision} ${key}`;
        const lost = new AbortController();
        const first = post(
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'notes__add_note',
              arguments: { text, delayMs: 1_500 },
              _meta: { [IDEMPOTENCY]: key },
            },
          },
          { authorization: `Bearer ${TEAM_KEYS.alpha}` },
          lost.signal,
        ).then((response) => response.text());
        first.catch(() => undefined);
        await waitForLedger(deployment.path('notes.jsonl'), (rows) =>
          rows.some((row) => row.text === text && row.phase === 'start'),
        );
        lost.abort(); // the stream is lost mid-call; no cancel was sent
        const client = await connect(revision);
        const retry: Json = await client.callTool({
          name: 'notes__add_note',
          arguments: { text, delayMs: 1_500 },
          _meta: { [IDEMPOTENCY]: key },
        });
        expect(retry.isError).toBeFalsy();
        const rows = await waitForLedger(deployment.path('notes.jsonl'), (all) =>
          all.some((row) => row.text === text && row.phase === 'done'),
        );
        const runs = rows.filter((row) => row.text === text);
        expect(runs.filter((row) => row.phase === 'start')).toHaveLength(1);
        expect(retry.structuredContent).toEqual({ id: runs.find((row) => row.phase === 'done')?.id });
        // A later retry is answered from the record, still without running the tool again.
        const again: Json = await client.callTool({
          name: 'notes__add_note',
          arguments: { text, delayMs: 1_500 },
          _meta: { [IDEMPOTENCY]: key },
        });
        expect(again.structuredContent).toEqual(retry.structuredContent);
        expect(again._meta[OUTCOME].jobId).toBe(retry._meta[OUTCOME].jobId);
        expect(readLedger(deployment.path('notes.jsonl')).filter((row) => row.text === text)).toHaveLength(2);
      });
    });
  }

  it.runIf(LOGS_BEFORE_RESULT)(
    "keeps a 2025-11-25 client's logging/setLevel for its key's later calls, and for no other team",
    async () => {
      const heard: Record<'alpha' | 'beta', HeardLog[]> = { alpha: [], beta: [] };
      const lines = [
        { level: 'info', text: 'routine' },
        { level: 'error', text: 'broken' },
      ];
      const call = async (team: 'alpha' | 'beta') => {
        // A new client (a new connection, as a stateless endpoint sees every request) for each call.
        const client = await connect('2025-11-25', TEAM_KEYS[team], {
          onLog: (log) => heard[team].push(log),
        });
        await client.callTool({ name: 'patient__log_lines', arguments: { lines, gapMs: 0 } });
      };
      const setter = (await connect('2025-11-25', TEAM_KEYS.beta)) as unknown as {
        setLoggingLevel: (level: string) => Promise<unknown>;
      };
      expect(await setter.setLoggingLevel('error')).toEqual({});
      try {
        await call('beta');
        await call('alpha');
        expect(heard.beta.map((log) => log.data)).toEqual(['broken']);
        expect(heard.alpha.map((log) => log.data)).toEqual(['routine', 'broken']);
        // Lowered again, the next call hears more: the level is the last one set.
        await setter.setLoggingLevel('debug');
        heard.beta.length = 0;
        await call('beta');
        expect(heard.beta.map((log) => log.data)).toEqual(['routine', 'broken']);
      } finally {
        await setter.setLoggingLevel('info');
      }
    },
  );

  it("hands a log message to nobody while another team's call runs on the same session", async () => {
    const heard: Record<'alpha' | 'beta', HeardLog[]> = { alpha: [], beta: [] };
    const debug = { 'io.modelcontextprotocol/logLevel': 'debug' };
    const alpha = await connect('2026-07-28', TEAM_KEYS.alpha, { onLog: (log) => heard.alpha.push(log) });
    const beta = await connect('2026-07-28', TEAM_KEYS.beta, { onLog: (log) => heard.beta.push(log) });
    // Beta's call holds the session's other slot, and wants logs too.
    const betaCall = beta.callTool({ name: 'shared__sleep', arguments: { ms: 1_500 }, _meta: debug });
    await waitForLedger(deployment.path('shared.jsonl'), (rows) => rows.some((row) => row.phase === 'start'));
    const lines = [{ level: 'info', text: 'alpha-private' }];
    const during: Json = await alpha.callTool({
      name: 'shared__log_lines',
      arguments: { lines, gapMs: 0 },
      _meta: debug,
    });
    expect(during.content[0].text).toBe('sent 1 log message(s)');
    await betaCall;
    // Neither heard it: the message named no call, and two were in flight.
    expect(heard).toEqual({ alpha: [], beta: [] });
    // Alone on the session, alpha's call hears its own line.
    await alpha.callTool({ name: 'shared__log_lines', arguments: { lines, gapMs: 0 }, _meta: debug });
    expect(heard.alpha.map((log) => log.data)).toEqual(['alpha-private']);
    expect(heard.beta).toEqual([]);
  });

  describe('the MCP Inspector CLI', () => {
    const inspect = (key: string | undefined, ...args: string[]) =>
      inspectorCli(
        `${orchestrator.url}/mcp`,
        [...(key ? ['--header', `Authorization: Bearer ${key}`] : []), ...args],
        deployment.dir,
      );
    const json = (stdout: string): Json => JSON.parse(stdout);

    it("lists the team's tools, and another team's key lists only its own", async () => {
      const alpha = await inspect(TEAM_KEYS.alpha, '--method', 'tools/list');
      expect(alpha.code, alpha.stderr).toBe(0);
      const names = json(alpha.stdout).tools.map((tool: Json) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['search__search', 'notes__add_note', 'slow__sleep']));
      const searchers = await inspect(TEAM_KEYS.searchers, '--method', 'tools/list');
      expect(searchers.code, searchers.stderr).toBe(0);
      const theirs = json(searchers.stdout).tools.map((tool: Json) => tool.name);
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.every((name: string) => name.startsWith('search__'))).toBe(true);
    });

    it('calls tools: a result, an isError result, invalid arguments, a timeout', async () => {
      const ok = await inspect(
        TEAM_KEYS.alpha,
        '--method',
        'tools/call',
        '--tool-name',
        'slow__sleep',
        '--tool-arg',
        'ms=5',
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect(json(ok.stdout)).toMatchObject({ structuredContent: { slept: 5 } });
      const toolError = await inspect(
        TEAM_KEYS.alpha,
        '--method',
        'tools/call',
        '--tool-name',
        'notes__delete_note',
        '--tool-arg',
        'id=nope',
      );
      expect(`${toolError.stdout}${toolError.stderr}`).toContain('Note not found');
      const invalid = await inspect(
        TEAM_KEYS.alpha,
        '--method',
        'tools/call',
        '--tool-name',
        'slow__sleep',
        '--tool-arg',
        'ms=soon',
      );
      expect(`${invalid.stdout}${invalid.stderr}`).toContain('[invalid_arguments]');
      const timeout = await inspect(TEAM_KEYS.alpha, '--method', 'tools/call', '--tool-name', 'slow__hang');
      expect(`${timeout.stdout}${timeout.stderr}`).toContain('[timeout]');
      expect(`${timeout.stdout}${timeout.stderr}`).toContain('may or may not have run');
    });

    it('is asked to authenticate without a key', async () => {
      // The 401 with WWW-Authenticate: Bearer sends the Inspector into its OAuth flow, which a CLI
      // without a terminal refuses to start.
      const run = await inspect(undefined, '--method', 'tools/list');
      expect(run.code).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toContain('auth_required');
    });
  });

  it('answers 401 with WWW-Authenticate: Bearer without a key or with an unknown one', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    for (const headers of [{}, { authorization: 'Bearer not-a-key' }] as Array<Record<string, string>>) {
      const response = await post(list, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await response.json()) as Json).id).toBe(1);
    }
    await expect(connectGateway(orchestrator.url, undefined, '2026-07-28')).rejects.toThrow();
  });

  it('refuses Mcp-Method / Mcp-Name headers that contradict the body with 400', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow__sleep', arguments: { ms: 1 } },
    };
    const auth = { authorization: `Bearer ${TEAM_KEYS.alpha}` };
    const wrongMethod = await post(call, { ...auth, 'mcp-method': 'tools/list' });
    expect(wrongMethod.status).toBe(400);
    const mismatch = (await wrongMethod.json()) as Json;
    // MCP 2026-07-28's HeaderMismatch, answered under the request's own id.
    expect(mismatch).toMatchObject({ id: 1, error: { code: -32020 } });
    expect(mismatch.error.message).toContain('Mcp-Method header "tools/list"');
    const wrongName = await post(call, {
      ...auth,
      'mcp-method': 'tools/call',
      'mcp-name': 'notes__add_note',
    });
    expect(wrongName.status).toBe(400);
    expect(((await wrongName.json()) as Json).error.message).toContain('Mcp-Name header "notes__add_note"');
    const matching = await post(call, { ...auth, 'mcp-method': 'tools/call', 'mcp-name': 'slow__sleep' });
    expect(matching.status).toBe(200);
  });

  it('refuses a foreign browser Origin with 403 before anything else, and takes listed, loopback and absent ones', async () => {
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
    const auth = { authorization: `Bearer ${TEAM_KEYS.alpha}` };
    // A DNS-rebound page: its own host name in Origin (and in Host, which proves nothing).
    for (const origin of ['http://evil.example.com', 'https://agents.example.com:8443', 'null']) {
      const refused = await post(list, { ...auth, origin });
      expect(refused.status, origin).toBe(403);
      const body = (await refused.json()) as Json;
      expect(body.id).toBe(7);
      expect(body.error.message).toBe(
        `Origin "${origin}" may not use /mcp: list it in orchestrator.mcp.allowedOrigins`,
      );
    }
    // Refused before the key is even looked at: no key, still 403, not 401.
    expect((await post(list, { origin: 'http://evil.example.com' })).status).toBe(403);
    const port = new URL(orchestrator.url).port;
    for (const origin of [ALLOWED_ORIGIN, `http://localhost:${port}`, 'http://127.0.0.1:6274', undefined]) {
      const taken = await post(list, origin ? { ...auth, origin } : auth);
      expect(taken.status, String(origin)).toBe(200);
    }
  });
});
