import { writeFileSync } from 'node:fs';
import { OUTCOME_STATUSES } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiClient, ApiResponse, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { isAlive, type TestProcess } from '../support/processes.ts';
import { readyReport } from '../support/readiness.ts';

const FINAL_JOB = new Set(['succeeded', 'completed_with_errors', 'failed', 'cancelled']);
const OUTCOMES = new Set<string>(OUTCOME_STATUSES);
const KiB = 1024;
const MiB = 1024 * KiB;
const HOSTILE_MAX_RESULT = 64 * KiB;
const UNSET_VARIABLE = 'SWITCHYARD_BAD_INPUT_NEVER_SET';

/**
 * Malformed and hostile input at every boundary: HTTP headers and bodies, tool arguments, tool results
 * from a server that sends what no well-behaved server would (examples/mcp-servers/src/hostile.ts), a
 * server that never finishes its handshake, and broken config files. Every case must end in a clear
 * error or outcome with a reason: no 5xx, no crashed process, no job left without a final status.
 * (api-boundaries.test.ts covers the ordinary 4xx cases: keys, teams, wrong fields, 413, 429, 409.)
 */
describe('bad input at every boundary', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let worker: TestProcess;
  let alpha: ApiClient;
  /** Every job this suite created: each must reach a final status. */
  const submitted: string[] = [];

  beforeAll(async () => {
    deployment = new Deployment('bad-input', (dir) => ({
      hostile: exampleServer('hostile', {
        // Room for a 5 MB result to cross stdio and be capped on a loaded 2-core machine (1.5 s was not).
        timeoutMs: 8_000,
        maxResultBytes: HOSTILE_MAX_RESULT,
        retry: { attempts: 1 },
        health: { pingIntervalMs: 500, pingTimeoutMs: 1_000, failureThreshold: 3 },
        reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
      }),
      mute: exampleServer('hostile', {
        env: { HOSTILE_HANDSHAKE: 'never' },
        handshakeTimeoutMs: 1_000,
        queueTimeoutMs: 3_000,
      }),
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
    }));
    // `mute` never becomes ready: wait only for the servers that can.
    worker = await deployment.startWorker({ id: 'w-bad', waitFor: ['hostile', 'search', 'notes'] });
    orchestrator = await deployment.startOrchestrator('o-bad');
    alpha = orchestrator.api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  // Whatever a test threw at them, both processes are still up and the orchestrator is ready.
  afterEach(async () => {
    if (!orchestrator) return;
    for (const proc of [orchestrator.process, worker]) {
      expect(proc.child.exitCode, `${proc.name} exited`).toBeNull();
      expect(isAlive(proc.pid), `${proc.name} alive`).toBe(true);
    }
    const ready = await alpha.request('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual(readyReport());
  });

  /** A 4xx with a JSON reason, never a 5xx. */
  const expectClientError = (response: ApiResponse<Json>, status?: number, reason?: RegExp) => {
    const where = `${response.status} ${JSON.stringify(response.body).slice(0, 300)}`;
    expect(response.status, where).toBeGreaterThanOrEqual(400);
    expect(response.status, where).toBeLessThan(500);
    if (status) expect(response.status, where).toBe(status);
    if (reason) expect(JSON.stringify(response.body), where).toMatch(reason);
  };

  /** Submits a job (raw text or an object), expects it accepted and waits for its final status. */
  const runJob = async (body: unknown, timeoutMs = 60_000): Promise<Json> => {
    const response = await alpha.submit(body);
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(201);
    submitted.push(response.body.id);
    const job = await alpha.finished(response.body.id, timeoutMs);
    expect(FINAL_JOB.has(job.status), job.status).toBe(true);
    return job;
  };

  /**
   * One call as a batch job: the job completes whatever the call's outcome (`succeeded` when it is
   * ok, else `completed_with_errors`); returns the stored outcome.
   */
  const runCall = async (tool: string, args: Record<string, unknown> = {}, timeoutMs?: number) => {
    const job = await runJob({ kind: 'batch', calls: [{ tool, arguments: args }] }, timeoutMs);
    expect(job.toolCalls).toHaveLength(1);
    const outcome = job.toolCalls[0].outcome;
    expect(outcome, `call of ${tool} has no outcome`).toBeTruthy();
    expect(job, `job ${job.id} ended ${job.status}: ${job.error}`).toMatchObject({
      status: outcome.status === 'ok' ? 'succeeded' : 'completed_with_errors',
      error: null,
    });
    expect(OUTCOMES.has(outcome.status), outcome.status).toBe(true);
    // The model is always told something, and the stored record is plain JSON.
    expect(outcome.text).toEqual(expect.any(String));
    expect(outcome.text.length).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(job))).toEqual(job);
    return { job, outcome };
  };

  const serverView = async (name: string): Promise<Json> => {
    const response = await alpha.withKey(TEAM_KEYS.operator).request('GET', '/v1/servers');
    expect(response.status).toBe(200);
    return response.body.servers.find((server: Json) => server.name === name);
  };

  describe('HTTP headers and bodies', () => {
    it('answers malformed Authorization headers with 401 (431 when too large), never a 5xx', async () => {
      const anonymous = alpha.withKey(undefined);
      const headers: Array<[string, number, RegExp?]> = [
        ['Basic eDp5', 401, /Bearer/],
        ['Bearer', 401, /Bearer/],
        ['Bearer    ', 401, /Bearer/],
        ['Bearer two keys', 401, /Bearer/],
        ['bearer\talpha', 401, /API key/],
        [`Bearer ${'k'.repeat(10 * KiB)}`, 401, /unknown API key/],
        // Past Node's 16 KiB header limit: refused before any route runs.
        [`Bearer ${'k'.repeat(20 * KiB)}`, 431],
      ];
      for (const [authorization, status, reason] of headers) {
        for (const [method, path] of [
          ['GET', '/v1/tools'],
          ['POST', '/v1/jobs'],
        ] as const) {
          const response = await anonymous.request(method, path, method === 'POST' ? {} : undefined, {
            authorization,
          });
          expectClientError(response, status, reason);
        }
      }
    });

    it('refuses an Idempotency-Key over 200 characters with 400 naming the header', async () => {
      const job = { kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'queue' } }] };
      expectClientError(
        await alpha.submit(job, { 'idempotency-key': 'k'.repeat(201) }),
        400,
        /Idempotency-Key.*200/,
      );
      expectClientError(await alpha.submit(job, { 'idempotency-key': '' }), 400, /Idempotency-Key/);
      // Exactly 200 is fine, and a replay returns the same job.
      const key = `${Date.now()}-`.padEnd(200, 'k');
      const first = await alpha.submit(job, { 'idempotency-key': key });
      expect(first.status).toBe(201);
      submitted.push(first.body.id);
      const again = await alpha.submit(job, { 'idempotency-key': key });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.body.id);
      expect((await alpha.finished(first.body.id)).status).toBe('succeeded');
    });

    it('answers bodies that are not plain UTF-8 JSON with a 4xx, never a 500', async () => {
      const looksLikeJson = JSON.stringify({
        kind: 'batch',
        calls: [{ tool: 'search__search', arguments: { query: 'queue' } }],
      });
      const cases: Array<[string, string, Record<string, string>, number, RegExp]> = [
        ['text/plain', looksLikeJson, { 'content-type': 'text/plain' }, 415, /text\/plain/],
        ['a form', 'kind=batch', { 'content-type': 'application/x-www-form-urlencoded' }, 415, /x-www-form/],
        ['an empty JSON body', '', { 'content-type': 'application/json' }, 400, /job request|kind/],
        [
          'a latin1 charset',
          looksLikeJson,
          { 'content-type': 'application/json; charset=latin1' },
          415,
          /charset/,
        ],
        ['gzip that is not gzip', looksLikeJson, { 'content-encoding': 'gzip' }, 400, /header check|gzip/],
        ['an unknown encoding', looksLikeJson, { 'content-encoding': 'rot13' }, 415, /encoding/],
      ];
      for (const [what, body, headers, status, reason] of cases) {
        const response = await alpha.request('POST', '/v1/jobs', body, headers);
        expect(response.status, what).toBe(status);
        expectClientError(response, status, reason);
      }
    });

    it('reads invalid UTF-8 bytes in a JSON body as replacement characters; the job still works', async () => {
      const body = Buffer.concat([
        Buffer.from('{"kind":"batch","calls":[{"tool":"search__search","arguments":{"query":"queue '),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from(' x"}}]}'),
      ]);
      const response = await fetch(`${alpha.baseUrl}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEAM_KEYS.alpha}`, 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(201);
      const { id } = (await response.json()) as { id: string };
      submitted.push(id);
      const job = await alpha.finished(id);
      expect(job.status).toBe('succeeded');
      expect(job.toolCalls[0].arguments.query).toContain('\uFFFD');
      expect(job.toolCalls[0].outcome.status).toBe('ok');
    });

    it('refuses or stores NUL characters and lone surrogates in a body, never a 500', async () => {
      const cases: Array<[string, unknown]> = [
        [
          'a NUL in tool arguments',
          { kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'queue\u0000' } }] },
        ],
        [
          'a NUL in metadata',
          {
            kind: 'batch',
            calls: [{ tool: 'search__search', arguments: { query: 'queue' } }],
            metadata: { note: 'a\u0000b' },
          },
        ],
        [
          'a lone surrogate in tool arguments',
          { kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'queue \ud800' } }] },
        ],
        [
          'a NUL in an agent input',
          { kind: 'agent', input: 'hi\u0000', model: { provider: 'scripted', script: [{ final: 'ok' }] } },
        ],
      ];
      const failures: string[] = [];
      for (const [what, body] of cases) {
        const response = await alpha.submit(body);
        if (response.status >= 500) {
          failures.push(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
        } else if (response.status === 201) {
          submitted.push(response.body.id);
          const job = await alpha.finished(response.body.id);
          expect(FINAL_JOB.has(job.status), `${what}: ${job.status}`).toBe(true);
        } else {
          expectClientError(response);
          expect(response.body.detail, what).toEqual(expect.any(String));
        }
      }
      expect(failures).toEqual([]);
    });

    it('keeps the event stream working whatever Last-Event-ID says', async () => {
      const job = await runJob({
        kind: 'batch',
        calls: [{ tool: 'search__search', arguments: { query: 'queue' } }],
      });
      const failures: string[] = [];
      for (const lastEventId of [
        'abc',
        '-1',
        '',
        '1.5',
        '0x10',
        'NaN',
        '1e400',
        '99999999999999999999999',
        'Infinity',
        '🙂',
      ]) {
        const response = await fetch(`${alpha.baseUrl}/v1/jobs/${job.id}/events`, {
          headers: {
            authorization: `Bearer ${TEAM_KEYS.alpha}`,
            'last-event-id': encodeURIComponent(lastEventId),
          },
          signal: AbortSignal.timeout(10_000),
        });
        const text = await response.text();
        // A garbage id is "no id": the whole stream is replayed, ending with the final status.
        if (response.status !== 200 || !/event: status\ndata: \{"status":"succeeded"/.test(text)) {
          failures.push(
            `Last-Event-ID ${JSON.stringify(lastEventId)}: ${response.status} ${JSON.stringify(text)}`,
          );
        }
      }
      expect(failures).toEqual([]);
    });

    it('neither pollutes prototypes nor crashes on __proto__ and constructor keys', async () => {
      expectClientError(
        await alpha.submit(
          '{"kind":"batch","calls":[{"tool":"search__search","arguments":{"query":"q"}}],"__proto__":{"polluted":true}}',
        ),
        400,
        /__proto__/,
      );
      expectClientError(
        await alpha.submit(
          '{"kind":"batch","calls":[{"tool":"search__search","arguments":{"query":"q"},"constructor":{"prototype":{"polluted":true}}}]}',
        ),
        400,
        /constructor/,
      );
      const job = await runJob(
        '{"kind":"batch","metadata":{"__proto__":"x"},"calls":[' +
          '{"tool":"search__search","arguments":{"query":"queue","__proto__":{"polluted":true,"limit":1}}},' +
          '{"tool":"search__search","arguments":{"__proto__":{"query":"inherited"}}},' +
          '{"tool":"search__search","arguments":{"query":"queue","constructor":{"prototype":{"polluted":true}}}}]}',
      );
      // One call is refused (below): the batch completes with errors.
      expect(job.status).toBe('completed_with_errors');
      const [own, inherited, viaConstructor] = job.toolCalls.map((call: Json) => call.outcome);
      expect(own.status).toBe('ok');
      // A query that only a polluted prototype could supply is missing, as it should be.
      expect(inherited).toMatchObject({ status: 'invalid_arguments', executed: 'no' });
      expect(inherited.error).toMatch(/query/);
      expect(viaConstructor.status).toBe('ok');
      // Nothing leaked into other objects: a fresh job's view and the tool list carry no "polluted".
      const plain = await runCall('search__search', { query: 'queue' });
      expect(plain.outcome.status).toBe('ok');
      expect(JSON.stringify(plain.job)).not.toContain('polluted');
      expect(JSON.stringify((await alpha.request('GET', '/v1/tools')).body)).not.toContain('polluted');
    });

    it('refuses or settles arguments nested 5,000 levels deep, never a 500', async () => {
      const deep = `${'{"d":'.repeat(5_000)}"bottom"${'}'.repeat(5_000)}`;
      const response = await alpha.submit(
        `{"kind":"batch","calls":[{"tool":"search__search","arguments":{"query":"queue","nested":${deep}}}]}`,
      );
      if (response.status === 201) {
        submitted.push(response.body.id);
        const job = await alpha.finished(response.body.id);
        expect(job.status).toBe('succeeded');
        expect(OUTCOMES.has(job.toolCalls[0]?.outcome?.status)).toBe(true);
      } else {
        expectClientError(response, undefined, /nest|deep|depth|arguments/i);
      }
    });
  });

  describe('tool arguments', () => {
    it('ends wrong types and missing fields invalid_arguments without reaching the server', async () => {
      const marker = `valid-${Date.now()}`;
      const bad: Array<[string, Record<string, unknown>, RegExp]> = [
        ['notes__add_note', { text: 42 }, /text/],
        ['notes__add_note', {}, /text/],
        ['notes__add_note', { text: '' }, /text/],
        ['notes__add_note', { text: `${marker}-delay`, delayMs: 'soon' }, /delayMs/],
        ['notes__add_note', { text: `${marker}-negative`, delayMs: -1 }, /delayMs/],
        ['notes__add_note', { text: ['an', 'array'] }, /text/],
        ['search__search', { query: 7 }, /query/],
        ['search__search', { limit: 3 }, /query/],
        ['search__search', { query: 'queue', limit: 1e9 }, /limit/],
        ['hostile__blob', { bytes: 'lots' }, /bytes/],
        ['hostile__blob', { bytes: 1.5 }, /bytes/],
        ['hostile__blob', { bytes: 64 * MiB }, /bytes/],
        ['hostile__blob', { bytes: 10, extra: true }, /extra/],
      ];
      const job = await runJob({
        kind: 'batch',
        calls: [
          ...bad.map(([tool, args]) => ({ tool, arguments: args })),
          // The one valid call: proof that the server was there and that only this reached it.
          { tool: 'notes__add_note', arguments: { text: marker } },
        ],
      });
      expect(job.status).toBe('completed_with_errors');
      const outcomes = job.toolCalls.map((call: Json) => call.outcome);
      bad.forEach(([tool, args, field], index) => {
        const outcome = outcomes[index];
        const what = `${tool} ${JSON.stringify(args)}`;
        expect(outcome, what).toMatchObject({ status: 'invalid_arguments', executed: 'no', attempts: 0 });
        expect(outcome.error, what).toMatch(field);
        expect(outcome.text, what).toMatch(/Invalid arguments/);
      });
      expect(outcomes.at(-1).status).toBe('ok');
      const notes = readLedger(deployment.path('notes.jsonl')).filter((row) =>
        String(row.text ?? '').startsWith(marker),
      );
      expect(notes.map((row) => [row.text, row.phase])).toEqual([
        [marker, 'start'],
        [marker, 'done'],
      ]);
    });

    it('settles calls with ~500 KB argument strings cleanly', async () => {
      const query = 'nomatch '.repeat(64_000); // 512,000 bytes
      const search = await runCall('search__search', { query });
      // The server echoes the query back: more than search's default 256 KiB cap, so it is cut.
      expect(search.outcome).toMatchObject({ status: 'ok', truncated: true });
      expect(search.outcome.text).toContain('[switchyard: result truncated');
      expect(search.job.toolCalls[0].arguments.query).toHaveLength(query.length);

      const text = `big-${Date.now()}-${'n'.repeat(500_000)}`;
      const note = await runCall('notes__add_note', { text });
      expect(note.outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      const rows = readLedger(deployment.path('notes.jsonl')).filter((row) => row.text === text);
      expect(rows.map((row) => row.phase)).toEqual(['start', 'done']);
    });
  });

  describe('tool results from a hostile server', () => {
    it('cuts a 5 MB result to maxResultBytes with a marker', async () => {
      const { outcome } = await runCall('hostile__blob', { bytes: 5 * MiB });
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', truncated: true });
      expect(outcome.text).toMatch(/\[switchyard: result truncated from \d+ to at most 65536 bytes/);
      expect(outcome.text.startsWith('hostile-blob-')).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(outcome.content))).toBeLessThanOrEqual(HOSTILE_MAX_RESULT);
      expect(Buffer.byteLength(JSON.stringify(outcome))).toBeLessThan(3 * HOSTILE_MAX_RESULT);
    });

    it('turns invalid UTF-8 in a result into replacement characters', async () => {
      const { job, outcome } = await runCall('hostile__bad_utf8');
      expect(outcome.status).toBe('ok');
      expect(outcome.text).toMatch(/^before\uFFFD+after$/);
      const raw = await fetch(`${alpha.baseUrl}/v1/jobs/${job.id}`, {
        headers: { authorization: `Bearer ${TEAM_KEYS.alpha}` },
      });
      const bytes = Buffer.from(await raw.arrayBuffer());
      // The API answers well-formed UTF-8 JSON.
      expect(new TextDecoder('utf-8', { fatal: true }).decode(bytes)).toContain('before');
    });

    it('survives lines that are not JSON-RPC and keeps the session for the next call', async () => {
      const before = await serverView('hostile');
      const { outcome } = await runCall('hostile__garbage_then_answer');
      if (outcome.status === 'ok') expect(outcome.text).toBe('answered after the garbage');
      else expect(outcome).toMatchObject({ status: 'failed', error: expect.any(String) });
      const next = await runCall('hostile__blob', { bytes: 10 });
      expect(next.outcome).toMatchObject({ status: 'ok', text: 'hostile-bl' });
      // Garbage alone is not a reason to drop the session.
      expect((await serverView('hostile')).sessions[0].connects).toBe(before.sessions[0].connects);
    });

    it('fails a result of the wrong shape, naming what is wrong', async () => {
      const { outcome } = await runCall('hostile__wrong_shape');
      expect(outcome).toMatchObject({ status: 'failed', attempts: 1 });
      expect(outcome.error).toMatch(/content/);
      expect(outcome.error).toMatch(/expected array/);
      expect(outcome.text).toMatch(/hostile\/wrong_shape failed/);
    });

    it("fails a JSON-RPC error response with the server's message", async () => {
      const { outcome } = await runCall('hostile__error_object');
      expect(outcome).toMatchObject({ status: 'failed', attempts: 1 });
      expect(outcome.error).toMatch(/-32603.*hostile: internal failure on purpose/);
    });

    it('times out a call that is never answered', async () => {
      const { outcome } = await runCall('hostile__never_answers');
      expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
      expect(outcome.text).toMatch(/did not finish within 8000 ms/);
      expect(outcome.runMs).toBeGreaterThanOrEqual(1_400);
      expect(outcome.runMs).toBeLessThan(10_000);
    });

    it('fails a line larger than the read buffer, reconnects, and serves the next call', async () => {
      const before = (await serverView('hostile')).sessions[0].connects as number;
      const { outcome } = await runCall('hostile__huge_line');
      // The session dropped with the call in flight: a lost non-idempotent call is indeterminate.
      expect(['indeterminate', 'timeout']).toContain(outcome.status);
      expect(outcome.executed).toBe('unknown');
      expect(outcome.error).toMatch(/Connection closed|timed out/);
      expect(outcome.content).toEqual([]);
      await vi.waitFor(
        async () => {
          const view = await serverView('hostile');
          expect(view.sessions[0]).toMatchObject({ state: 'ready', connects: before + 1 });
        },
        { timeout: 20_000, interval: 200 },
      );
      const next = await runCall('hostile__blob', { bytes: 10 });
      expect(next.outcome).toMatchObject({ status: 'ok', text: 'hostile-bl' });
    });

    it('records a result holding NUL characters and lone surrogates without losing the call', async () => {
      // Legal JSON from the server, but PostgreSQL jsonb refuses \u0000 and unpaired surrogates.
      const { job, outcome } = await runCall('hostile__nul_text', {}, 90_000);
      expect(['ok', 'failed']).toContain(outcome.status);
      expect(job.toolCalls[0].status).toBe(outcome.status);
    });

    it('hands hostile outcomes back to an agent as tool messages', async () => {
      const job = await runJob({
        kind: 'agent',
        input: 'call the hostile tools',
        model: {
          provider: 'scripted',
          script: [
            {
              toolCalls: [
                { id: 'shape', tool: 'hostile__wrong_shape', arguments: {} },
                { id: 'utf8', tool: 'hostile__bad_utf8', arguments: {} },
                { id: 'rpc', tool: 'hostile__error_object', arguments: {} },
                { id: 'args', tool: 'hostile__blob', arguments: { bytes: 'many' } },
              ],
            },
            { final: 'survived' },
          ],
        },
      });
      expect(job).toMatchObject({ status: 'succeeded', result: 'survived' });
      const byId = Object.fromEntries(job.toolCalls.map((call: Json) => [call.id, call.outcome.status]));
      expect(byId).toEqual({ shape: 'failed', utf8: 'ok', rpc: 'failed', args: 'invalid_arguments' });
      const toolMessages = job.messages.filter((message: Json) => message.role === 'tool');
      expect(toolMessages).toHaveLength(4);
    });
  });

  describe('a server that never completes the handshake', () => {
    it('ends calls unavailable by their deadline and shows why in /v1/servers', async () => {
      const started = Date.now();
      const job = await runJob({
        kind: 'batch',
        calls: [
          { tool: 'mute__blob', arguments: { bytes: 1 } },
          { tool: 'mute__never_answers', arguments: {} },
        ],
      });
      const elapsed = Date.now() - started;
      expect(job.status).toBe('completed_with_errors');
      for (const call of job.toolCalls) {
        expect(call.outcome).toMatchObject({ status: 'unavailable', executed: 'no', attempts: 0 });
        expect(call.outcome.text).toMatch(/mute/);
      }
      // queueTimeoutMs is 3 s: the calls never hang past it by much.
      expect(elapsed).toBeLessThan(15_000);

      const mute = await serverView('mute');
      expect(mute.availability).not.toBe('ready');
      expect(mute.tools).toBe(0);
      expect(mute.sessions).toHaveLength(1);
      expect(mute.sessions[0].state).not.toBe('ready');
      expect(mute.sessions[0].lastError).toMatch(/connect failed.*timed out/i);
      expect(mute.queue).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
    });
  });

  describe('every job ended', () => {
    it('left no job without a final status and no call in a queue', async () => {
      expect(submitted.length).toBeGreaterThan(10);
      for (const id of submitted) {
        const job = await alpha.job(id);
        expect(FINAL_JOB.has(job.status), `${id} is ${job.status}`).toBe(true);
        for (const call of job.toolCalls) expect(call.outcome, `${id}/${call.id}`).toBeTruthy();
      }
      for (const name of ['hostile', 'mute', 'search', 'notes']) {
        expect((await serverView(name)).queue, name).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      }
    });
  });

  describe('config files', () => {
    const validServers =
      'servers:\n  search:\n    command: node\n    args: [examples/mcp-servers/src/search.ts]\n';
    it.each([
      [
        'a YAML syntax error',
        `${validServers}teams:\n  alpha:\n    apiKeys: [${JSON.stringify(TEAM_KEYS.alpha)}\n    maxConcurrentJobs: 3\n`,
        /invalid YAML: .*line \d+/,
      ],
      [
        'an unknown key',
        `${validServers}orchestrator:\n  maxRequestByte: 2048\n`,
        /orchestrator: Unrecognized key: "maxRequestByte"/,
      ],
      [
        'a reference to an unset variable',
        `${validServers}teams:\n  alpha:\n    apiKeys: ["\${${UNSET_VARIABLE}}"]\n`,
        new RegExp(`teams\\.alpha\\.apiKeys\\.0: environment variable ${UNSET_VARIABLE} is not set`),
      ],
      [
        'a team key shorter than 16 characters',
        `${validServers}teams:\n  alpha:\n    apiKeys: ["short-key"]\n`,
        /teams\.alpha\.apiKeys\.0: API keys must be at least 16 characters/,
      ],
      [
        'an alias bomb',
        `a: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n${validServers}`,
        /invalid YAML|alias/i,
      ],
      ['a document that is a list', '- servers\n- teams\n', /\(root\): /],
      ['a wrong type', `${validServers}    timeoutMs: soon\n`, /servers\.search\.timeoutMs: /],
      [
        'a tool-call retention shorter than the longest deadline',
        `${validServers}toolCalls:\n  keepCompletedSeconds: 3600\n`,
        /toolCalls\.keepCompletedSeconds: must be at least orchestrator\.maxDeadlineMs \(86400000 ms/,
      ],
    ])('exits 2 on %s, naming the key or line', async (what, yaml, reason) => {
      expect(process.env[UNSET_VARIABLE]).toBeUndefined();
      const path = deployment.path(`bad-${what.replaceAll(/\W+/g, '-')}.yaml`);
      writeFileSync(path, yaml);
      const proc = deployment.startOrchestratorOn(path, `orchestrator with ${what}`);
      const code = await Promise.race([
        proc.exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 45_000).unref()),
      ]);
      const stderr = proc.stderr.join('');
      expect(code, stderr).toBe(2);
      expect(stderr).toMatch(/switchyard orchestrator: config error: /);
      expect(stderr).toContain(path);
      expect(stderr).toMatch(reason);
      expect(stderr).not.toMatch(/\n\s+at /); // a reason, not a stack trace
    });
  });
});
