import { redisKeys, ServerCatalogEntrySchema, WorkerHeartbeatSchema } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { EVERYTHING_SERVER, exampleServerPath, tsxArgs } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import type { LogLine, TestProcess } from '../support/processes.ts';

const MODERN = ['modern-stdio', 'modern-http'] as const;
const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/;

/**
 * Both MCP revisions side by side in one fleet (docs/architecture.md, sessions): a server that speaks
 * only 2026-07-28 (stateless, no initialize), over stdio and Streamable HTTP, next to server-everything,
 * which speaks 2025-11-25. The worker negotiates each; every promise holds on both.
 */
describe('MCP 2026-07-28 and 2025-11-25 in one fleet', () => {
  let fleet: Fleet;
  let worker: TestProcess;
  let port: number;
  let call = 0;

  const startHttpModern = async (): Promise<TestProcess> => {
    const server = fleet.group.start(
      'http modern',
      tsxArgs(exampleServerPath('modern'), '--http', String(port)),
      { MODERN_LEDGER: fleet.path('modern-http.jsonl') },
    );
    await server.waitFor((_log, raw) => raw.includes('"listening"'), 'the 2026-07-28 HTTP server to listen');
    return server;
  };
  const run = async (server: string, tool: string, args: Record<string, unknown>) =>
    (await fleet.dispatcher()).dispatch({
      jobId: 'revisions',
      toolCallId: `c${++call}`,
      server,
      tool,
      arguments: args,
    });
  const ledgerOf = (server: string) => fleet.path(`${server}.jsonl`);

  beforeAll(async () => {
    port = await freePort();
    const common = { timeoutMs: 800, retry: { attempts: 1 } };
    fleet = new Fleet('revisions', (dir) => ({
      'modern-stdio': exampleServer('modern', {
        env: { MODERN_LEDGER: `${dir}/modern-stdio.jsonl` },
        reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
        ...common,
      }),
      'modern-http': {
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        reconnect: { initialDelayMs: 100, maxDelayMs: 300 },
        // Nothing tells a stateless HTTP client that the server went away between calls: the
        // liveness checks (server/discover on this revision) do.
        health: { pingIntervalMs: 200, pingTimeoutMs: 1_000, failureThreshold: 2 },
        ...common,
      },
      // Pinned: no server/discover probe (and no probe process) before the initialize handshake.
      everything: {
        transport: 'stdio',
        command: process.execPath,
        args: [EVERYTHING_SERVER, 'stdio'],
        protocol: '2025-11-25',
        ...common,
      },
      // Pinned to a revision the server does not speak: it must never be served on an older one.
      'everything-pinned-new': {
        transport: 'stdio',
        command: process.execPath,
        args: [EVERYTHING_SERVER, 'stdio'],
        protocol: '2026-07-28',
        reconnect: { initialDelayMs: 200, maxDelayMs: 1_000 },
        handshakeTimeoutMs: 5_000,
        ...common,
      },
    }));
    await startHttpModern();
    worker = await fleet.startWorker({
      id: 'w-revisions',
      waitFor: ['modern-stdio', 'modern-http', 'everything'],
    });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('negotiates 2026-07-28 with the new server on both transports and 2025-11-25 with server-everything', async () => {
    await Promise.all(
      ['modern-stdio', 'modern-http', 'everything'].map((s) => fleet.sessionState(s, 'ready')),
    );
    const beats = Object.values(await fleet.redis.hgetall(redisKeys.workers(fleet.prefix))).map((raw) =>
      WorkerHeartbeatSchema.parse(JSON.parse(raw)),
    );
    const sessions = beats.find((beat) => beat.workerId === 'w-revisions')?.sessions;
    expect(sessions?.['modern-stdio']?.protocolVersion).toBe('2026-07-28');
    expect(sessions?.['modern-http']?.protocolVersion).toBe('2026-07-28');
    expect(sessions?.everything?.protocolVersion).toBe('2025-11-25');
  });

  it('a server pinned to 2026-07-28 that speaks only 2025-11-25 is not served, and says why', async () => {
    const failed = await worker.waitFor(
      (log) => sessionLog('everything-pinned-new', 'reconnecting')(log) && typeof log.error === 'string',
      'the pinned session to fail',
      60_000,
    );
    expect(String(failed.error)).toMatch(/connect failed/);
    expect(worker.logs.some(sessionLog('everything-pinned-new', 'ready'))).toBe(false);
  });

  for (const server of MODERN) {
    it(`${server}: lists and calls tools; the server got the trace context and the revision in _meta`, async () => {
      const outcome = await run(server, 'echo', { text: `hello over ${server}` });
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      expect(outcome.structuredContent).toEqual({ text: `hello over ${server}` });
      const [received] = readLedger(ledgerOf(server)).filter((row) => row.tool === 'echo');
      expect(received?.protocolVersion).toBe('2026-07-28');
      if (server === 'modern-http')
        expect(received).toMatchObject({ mcpMethod: 'tools/call', mcpName: 'echo' });
      const traceId = TRACEPARENT.exec(String(received?.traceparent))?.[1];
      expect(traceId, `traceparent ${String(received?.traceparent)}`).toBeDefined();
      // The trace the server was handed is the one the worker logged this call under.
      // (Waited for: the outcome can reach us before the worker's log line does.)
      await worker.waitFor(
        (log) => log.trace_id === traceId && log.msg === 'tool call finished',
        `the worker's log of trace ${traceId}`,
      );
    });

    it(`${server}: isError is a tool_error that ran`, async () => {
      const outcome = await run(server, 'fail', { message: 'no luck' });
      expect(outcome).toMatchObject({ status: 'tool_error', executed: 'yes' });
      expect(outcome.text).toContain('no luck');
    });

    it(`${server}: invalid arguments are refused before sending`, async () => {
      const outcome = await run(server, 'add', { a: 'one', b: 2 });
      expect(outcome).toMatchObject({ status: 'invalid_arguments', executed: 'no', attempts: 0 });
      expect(readLedger(ledgerOf(server)).filter((row) => row.tool === 'add')).toHaveLength(0);
      expect(await run(server, 'add', { a: 40, b: 2 })).toMatchObject({
        status: 'ok',
        structuredContent: { sum: 42 },
      });
    });

    it(`${server}: a timeout cancels the call on the server`, async () => {
      // No progress before the 800 ms timeout: the call is cut, and the server sees the cancel.
      const outcome = await run(server, 'sleep', { ms: 60_000, progressEveryMs: 60_000 });
      expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
      const rows = await waitForLedger(ledgerOf(server), (all) =>
        all.some((row) => row.tool === 'sleep' && row.phase === 'cancelled'),
      );
      expect(rows.filter((row) => row.tool === 'sleep' && row.phase === 'done')).toHaveLength(0);
    });

    it(`${server}: progress extends the timeout`, async () => {
      // 2 s of work against an 800 ms per-attempt timeout, kept alive by progress every 100 ms.
      const outcome = await run(server, 'sleep', { ms: 2_000, progressEveryMs: 100 });
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', structuredContent: { slept: 2_000 } });
    });
  }

  it('modern-stdio: a tool the server adds reaches the catalog (tools list_changed on 2026-07-28)', async () => {
    expect(await run('modern-stdio', 'grow', { name: 'sprout' })).toMatchObject({ status: 'ok' });
    await waitForCatalogTool(fleet, 'modern-stdio', 'sprout');
    const outcome = await run('modern-stdio', 'sprout', { text: 'new leaf' });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(outcome.text).toContain('new leaf');
  });

  it('modern-stdio: reconnects after the server process dies, on a new process', async () => {
    const before = (await run('modern-stdio', 'whoami', {})).structuredContent as { pid: number };
    const ready = logAfter(worker, sessionLog('modern-stdio', 'ready'), 'modern-stdio to be ready again');
    process.kill(before.pid, 'SIGKILL');
    expect((await ready).protocolVersion).toBe('2026-07-28');
    const after = (await run('modern-stdio', 'whoami', {})).structuredContent as { pid: number };
    expect(after.pid).not.toBe(before.pid);
  });

  it('modern-http: a call whose response stream is lost is not re-issued; the session reconnects after a restart', async () => {
    const before = (await run('modern-http', 'whoami', {})).structuredContent as { pid: number };
    const server = fleet.group.processes.find((proc) => proc.name === 'http modern') as TestProcess;
    // A non-idempotent call (sleep is not declared idempotent) is running when the server dies.
    // The response stream is open and carrying progress when the server dies: it ends without the answer.
    const streaming = logAfter(
      worker,
      (log) => log.msg === 'tool call progress' && log.server === 'modern-http' && log.tool === 'sleep',
      'progress of the call on modern-http',
    );
    const running = run('modern-http', 'sleep', { ms: 20_000, progressEveryMs: 100 });
    await waitForLedger(ledgerOf('modern-http'), (rows) =>
      rows.some((row) => row.tool === 'sleep' && row.phase === 'start' && row.ms === 20_000),
    );
    await streaming;
    const lost = logAfter(
      worker,
      sessionLog('modern-http', 'reconnecting'),
      'the modern-http session to be lost',
    );
    await server.crash();
    const outcome = await running;
    expect(outcome).toMatchObject({ status: 'indeterminate', executed: 'unknown', attempts: 1 });
    expect(outcome.text).toMatch(/connection to the server was lost.*not sent again/);
    // Reported when the stream ended, not when the per-attempt timeout would have cut the call.
    expect(outcome.error).toMatch(/response stream of tools\/call ended before its answer/);
    await lost;
    const ready = logAfter(worker, sessionLog('modern-http', 'ready'), 'modern-http to be ready again');
    await startHttpModern();
    expect((await ready).protocolVersion).toBe('2026-07-28');
    const after = await run('modern-http', 'whoami', {});
    expect(after).toMatchObject({ status: 'ok' });
    expect((after.structuredContent as { pid: number }).pid).not.toBe(before.pid);
    // Sent once, never again: the restarted server did not get the lost call.
    const starts = readLedger(ledgerOf('modern-http')).filter(
      (row) => row.tool === 'sleep' && row.phase === 'start' && row.ms === 20_000,
    );
    expect(starts).toHaveLength(1);
  });

  it('everything (2025-11-25): calls work beside the new revision', async () => {
    const outcome = await run('everything', 'echo', { message: 'hello from 2025-11-25' });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(outcome.text).toContain('hello from 2025-11-25');
  });

  it('everything: a task-required tool is in the catalog with its execution, and runs as a task', async () => {
    const entry = await waitForCatalogTool(fleet, 'everything', 'simulate-research-query');
    expect(entry.execution).toMatchObject({ taskSupport: 'required' });
    // On 2025-11-25 the worker runs it as a task (test/fleet/tasks.test.ts covers tasks in depth).
    const outcome = await run('everything', 'simulate-research-query', { topic: 'queues' });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(outcome.text).toContain('# Research Report: queues');
  });
});

function sessionLog(server: string, state: string) {
  return (log: LogLine) => log.msg === 'session state' && log.server === server && log.state === state;
}

/** The first log line matching `match` written after this call (TestProcess.waitFor scans from the start). */
function logAfter(process: TestProcess, match: (log: LogLine) => boolean, what: string): Promise<LogLine> {
  const from = process.lines.length;
  let index = 0;
  // waitFor hands each line to the matcher once, in order: counting them skips the history.
  return process.waitFor((log) => index++ >= from && match(log), what, 60_000);
}

/** The catalog entry of `tool`, once a worker has published it (tools a server adds after connect arrive by list_changed). */
async function waitForCatalogTool(fleet: Fleet, server: string, tool: string, timeoutMs = 30_000) {
  const subscriber = fleet.redis.duplicate();
  const find = async () => {
    const raw = await fleet.redis.hget(redisKeys.catalog(fleet.prefix), server);
    return raw
      ? ServerCatalogEntrySchema.parse(JSON.parse(raw)).tools.find((t) => t.name === tool)
      : undefined;
  };
  try {
    return await new Promise<NonNullable<Awaited<ReturnType<typeof find>>>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${server}/${tool} not in the catalog`)), timeoutMs);
      const check = () =>
        void find().then((found) => {
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        }, reject);
      subscriber.on('message', check);
      void subscriber.subscribe(redisKeys.catalogChanged(fleet.prefix)).then(check, reject);
    });
  } finally {
    subscriber.disconnect();
  }
}
