import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

/**
 * One worker, real stdio MCP servers: every outcome of docs/semantics.md §5 that a single healthy worker can
 * produce, with the `executed` value each one must carry, and warm session reuse.
 */
describe('tool worker outcomes', () => {
  let fleet: Fleet;
  let dispatcher: ToolCallDispatcher;
  let call = 0;
  const request = (server: string, tool: string, args: Record<string, unknown>, extra = {}) =>
    dispatcher.dispatch({
      jobId: 'outcomes',
      toolCallId: `call-${++call}`,
      server,
      tool,
      arguments: args,
      ...extra,
    });

  beforeAll(async () => {
    fleet = new Fleet('outcomes', (dir) => ({
      search: exampleServer('search', {
        env: { SEARCH_LEDGER: `${dir}/search.jsonl`, SESSION_LEDGER: `${dir}/search-sessions.jsonl` },
        trusted: true,
      }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      slow: exampleServer('slow', {
        env: { SLOW_LEDGER: `${dir}/slow.jsonl` },
        // Long enough for the blocker of the `expired` case below to hold the server on a busy machine.
        timeoutMs: 3_000,
        retry: { attempts: 1 },
      }),
      capped: exampleServer('search', { maxResultBytes: 1024 }),
      // Configured but served by no worker: calls to it must end `unavailable` at once.
      orphan: exampleServer('search'),
    }));
    await fleet.startWorker({ servers: ['search', 'notes', 'slow', 'capped'] });
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('reuses one warm session: many calls, one initialize', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 25 }, (_, index) => request('search', 'search', { query: `queue ${index}` })),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(25).fill('ok'));
    expect(readLedger(fleet.path('search.jsonl'))).toHaveLength(25);
    expect(
      readLedger(fleet.path('search-sessions.jsonl')).filter((row) => row.event === 'initialized'),
    ).toHaveLength(1);
  });

  it('ok carries the result, executed yes, timings and the worker id', async () => {
    const before = Date.now();
    const outcome = await request('search', 'search', { query: 'BullMQ', limit: 2 });
    const after = Date.now();
    expect(outcome).toMatchObject({
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      server: 'search',
      tool: 'search',
    });
    expect(outcome.workerId).toMatch(/^w/);
    expect(outcome.text.length).toBeGreaterThan(0);
    expect(outcome.structuredContent).toHaveProperty('hits');
    // The timings describe this call: it finished while we waited, and waiting plus running fit inside it.
    expect(outcome.finishedAt).toBeGreaterThanOrEqual(before);
    expect(outcome.finishedAt).toBeLessThanOrEqual(after);
    expect(outcome.queuedMs + outcome.runMs).toBeLessThanOrEqual(after - before);
  });

  it('tool_error for isError results, executed yes, not retried', async () => {
    const outcome = await request('search', 'get_document', { id: 'no-such-doc' });
    expect(outcome).toMatchObject({ status: 'tool_error', executed: 'yes', attempts: 1 });
    const calls = readLedger(fleet.path('search.jsonl')).filter((row) => row.tool === 'get_document');
    expect(calls).toHaveLength(1);
  });

  it('invalid_arguments never reaches the server', async () => {
    const before = readLedger(fleet.path('notes.jsonl')).length;
    const outcome = await request('notes', 'add_note', { text: 42 });
    expect(outcome).toMatchObject({ status: 'invalid_arguments', executed: 'no', attempts: 0 });
    expect(outcome.text).toContain('arguments.text');
    expect(readLedger(fleet.path('notes.jsonl'))).toHaveLength(before);
  });

  it('timeout cancels the call on the server, executed unknown', async () => {
    const outcome = await request('slow', 'hang', {});
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
    // The server saw notifications/cancelled for the request it was holding.
    const slowLedger = await waitForLedger(fleet.path('slow.jsonl'), (rows) =>
      rows.some((row) => row.phase === 'cancelled'),
    );
    expect(slowLedger.filter((row) => row.phase === 'cancelled')).toHaveLength(1);
  });

  it('unavailable at once when no worker serves the server', async () => {
    const outcome = await request('orphan', 'search', { query: 'x' });
    expect(outcome).toMatchObject({ status: 'unavailable', executed: 'no', attempts: 0 });
  });

  it('expired when a call waits in the queue past its deadline, and it never runs', async () => {
    // The slow server is serialized (concurrency 1): a long sleep holds it while the next call's deadline passes.
    const blocker = request('slow', 'sleep', { ms: 2_000 });
    // Queued only once the blocker runs: added at once, the two could reach the queue in either order.
    await waitForLedger(fleet.path('slow.jsonl'), (rows) =>
      rows.some((row) => row.tool === 'sleep' && row.phase === 'start' && row.ms === 2_000),
    );
    const late = request('notes', 'add_note', { text: 'never' }, { queueTimeoutMs: 1 });
    const queuedBehind = request('slow', 'sleep', { ms: 1 }, { queueTimeoutMs: 50 });
    const [blocked, lateOutcome, behind] = await Promise.all([blocker, late, queuedBehind]);
    expect(blocked.status).toBe('ok');
    expect(behind).toMatchObject({ status: 'expired', executed: 'no', attempts: 0 });
    expect(lateOutcome).toMatchObject({ status: 'expired', executed: 'no' });
    expect(readLedger(fleet.path('notes.jsonl')).filter((row) => row.text === 'never')).toHaveLength(0);
  });

  it('re-dispatching the same tool call returns its recorded outcome without running it again', async () => {
    const first = await dispatcher.dispatch({
      jobId: 'rerun',
      toolCallId: 'only-once',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'exactly once' },
    });
    const again = await dispatcher.dispatch({
      jobId: 'rerun',
      toolCallId: 'only-once',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'exactly once' },
    });
    expect(first.status).toBe('ok');
    expect(again).toEqual(first);
    const runs = readLedger(fleet.path('notes.jsonl')).filter(
      (row) => row.text === 'exactly once' && row.phase === 'done',
    );
    expect(runs).toHaveLength(1);
  });

  it('caps oversized results with a marker', async () => {
    const outcome = await request('capped', 'search', { query: 'the', limit: 20 });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', truncated: true });
    expect(
      JSON.stringify(outcome.content).length + JSON.stringify(outcome.structuredContent ?? {}).length,
    ).toBeLessThan(1024);
    expect(outcome.text).toContain('[switchyard: result truncated');
  });
});
