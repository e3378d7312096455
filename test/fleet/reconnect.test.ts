import type { AttemptRecord } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { exampleServerPath, tsxArgs } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import type { TestProcess } from '../support/processes.ts';

/**
 * docs/semantics.md §11: a server process that dies is reconnected; calls sent while no session is ready
 * wait for one that is, or end at their deadline — never lost, never hanging.
 */
describe('MCP server failures', () => {
  let fleet: Fleet;
  let port: number;
  let worker: TestProcess;

  const startHttpRecorder = async (): Promise<TestProcess> => {
    const server = fleet.group.start(
      'http recorder',
      tsxArgs(exampleServerPath('recorder'), '--http', String(port)),
    );
    await server.waitFor((_log, raw) => raw.includes('"listening"'), 'the HTTP recorder to listen');
    return server;
  };

  beforeAll(async () => {
    port = await freePort();
    const retrying = { timeoutMs: 300, retry: { attempts: 3, backoffMs: 50 } };
    fleet = new Fleet('reconnect', (dir) => ({
      crashy: exampleServer('crashy', {
        env: { CRASHY_LEDGER: `${dir}/crashy.jsonl` },
        reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
        idempotent: ['flaky'],
        ...retrying,
      }),
      'crashy-strict': exampleServer('crashy', {
        env: { CRASHY_LEDGER: `${dir}/crashy-strict.jsonl` },
        nonIdempotent: ['flaky'],
        ...retrying,
      }),
      remote: {
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        idempotent: ['record'],
        reconnect: { initialDelayMs: 100, maxDelayMs: 300 },
        // Nothing tells an HTTP client that the server went away between calls: pings do.
        health: { pingIntervalMs: 200, pingTimeoutMs: 500, failureThreshold: 2 },
      },
      // The same server with its circuit set to open as soon as every session is reconnecting.
      'remote-fast-fail': {
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        idempotent: ['record'],
        unavailableAfterMs: 0,
        reconnect: { initialDelayMs: 100, maxDelayMs: 300 },
        health: { pingIntervalMs: 200, pingTimeoutMs: 500, failureThreshold: 2 },
      },
    }));
    await startHttpRecorder();
    worker = await fleet.startWorker({ id: 'w-reconnect' });
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('reconnects a stdio server that died mid-call; the call queued behind it runs on the new process', async () => {
    const dispatcher = await fleet.dispatcher();
    const call = (toolCallId: string, tool: string) =>
      dispatcher.dispatch({ jobId: 'reconnect', toolCallId, server: 'crashy', tool, arguments: {} });
    const before = await call('who-1', 'whoami');
    expect(before.status).toBe('ok');

    const [crashed, after] = await Promise.all([call('crash', 'crash'), call('who-2', 'whoami')]);
    // The crash is not idempotent and the server died holding it: it may have run, so it is not retried.
    expect(crashed).toMatchObject({ status: 'indeterminate', executed: 'unknown', attempts: 1 });
    expect(crashed.text).toMatch(/connection to the server was lost.*not sent again/);
    expect(after.status).toBe('ok');
    const pidOf = (outcome: typeof before) => (outcome.structuredContent as { pid: number }).pid;
    expect(pidOf(after)).not.toBe(pidOf(before));
    expect(
      worker.logs.filter(
        (log) => log.msg === 'session state' && log.server === 'crashy' && log.state === 'ready',
      ),
    ).toHaveLength(2);
  });

  it('retries an idempotent call that timed out, with backoff, until it answers', async () => {
    const dispatcher = await fleet.dispatcher();
    const outcome = await dispatcher.dispatch({
      jobId: 'retry',
      toolCallId: 'flaky-idempotent',
      server: 'crashy',
      tool: 'flaky',
      arguments: { key: 'k1', failures: 2 },
    });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', attempts: 3 });
    // docs/semantics.md §5: every attempt, oldest first; the two that timed out say so.
    const log = outcome.attemptLog ?? [];
    expect(log.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
    expect(log.map((entry) => entry.error)).toEqual([
      expect.stringContaining('timed out'),
      expect.stringContaining('timed out'),
      undefined,
    ]);
    for (const [index, entry] of log.entries()) {
      expect(entry).toMatchObject({ workerId: 'w-reconnect', startedAt: expect.any(Number) });
      expect(entry.finishedAt).toBeGreaterThanOrEqual(entry.startedAt ?? 0);
      if (index > 0) expect(entry.pickedUpAt).toBeGreaterThanOrEqual(log[index - 1]?.finishedAt ?? 0);
    }
    // The queue wait ends at the first pick-up: the timed-out attempts and their backoff are not in it.
    const [first, , last] = log as [AttemptRecord, AttemptRecord, AttemptRecord];
    expect(outcome.queuedMs).toBeLessThan(last.pickedUpAt - first.pickedUpAt);
    // The run is the last attempt's, which answered at once.
    expect(outcome.runMs).toBeLessThan(300);
    const calls = readLedger(fleet.path('crashy.jsonl')).filter((row) => row.key === 'k1');
    expect(calls.filter((row) => row.phase === 'start')).toHaveLength(3);
    expect(calls.filter((row) => row.phase === 'cancelled')).toHaveLength(2);
  });

  it('never retries a non-idempotent call that timed out', async () => {
    const dispatcher = await fleet.dispatcher();
    const outcome = await dispatcher.dispatch({
      jobId: 'retry',
      toolCallId: 'flaky-strict',
      server: 'crashy-strict',
      tool: 'flaky',
      arguments: { key: 'k2', failures: 1 },
    });
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
    const starts = readLedger(fleet.path('crashy-strict.jsonl')).filter(
      (row) => row.key === 'k2' && row.phase === 'start',
    );
    expect(starts).toHaveLength(1);
  });

  it('holds calls while a remote server is down: unavailable at the deadline, served once it is back', async () => {
    const dispatcher = await fleet.dispatcher();
    const record = (toolCallId: string, queueTimeoutMs: number) =>
      dispatcher.dispatch({
        jobId: 'reconnect',
        toolCallId,
        server: 'remote',
        tool: 'record',
        arguments: { ms: 1, label: toolCallId },
        queueTimeoutMs,
      });
    expect((await record('while-up', 5_000)).status).toBe('ok');

    const server = fleet.group.processes.find((proc) => proc.name === 'http recorder') as TestProcess;
    const lost = worker.waitFor(
      (log) => log.msg === 'session state' && log.server === 'remote' && log.state === 'reconnecting',
      'the remote session to be lost',
    );
    const circuitOpen = fleet.sessionState('remote-fast-fail', 'reconnecting');
    await server.stop();
    await Promise.all([lost, circuitOpen]);

    // An open circuit answers at once, with the reason, instead of holding the call for its deadline.
    const refused = await dispatcher.dispatch({
      jobId: 'reconnect',
      toolCallId: 'circuit-open',
      server: 'remote-fast-fail',
      tool: 'record',
      arguments: { ms: 1 },
      queueTimeoutMs: 600_000,
    });
    expect(refused).toMatchObject({
      status: 'unavailable',
      executed: 'no',
      attempts: 0,
      error: 'circuit_open',
    });
    expect(refused.text).toContain('has been failing');

    const late = await record('while-down', 1_500);
    expect(late).toMatchObject({ status: 'unavailable', executed: 'no', attempts: 0 });

    const waiting = record('until-back', 30_000);
    await startHttpRecorder();
    const served = await waiting;
    expect(served).toMatchObject({ status: 'ok', executed: 'yes' });
  });
});
