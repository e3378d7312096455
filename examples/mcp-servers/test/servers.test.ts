import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readLedger } from '../src/ledger.ts';
import { isAlive, Resources, ROOT, serverArgs, stop, textOf } from './harness.ts';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const resources = new Resources();
afterEach(() => resources.release());

/** Polls a ledger until `accept` holds: the record is written by another process. */
function waitForLedger(path: string, accept: (records: ReturnType<typeof readLedger>) => boolean) {
  return vi.waitFor(
    () => {
      const records = readLedger(path);
      if (!accept(records)) throw new Error(`ledger not there yet: ${JSON.stringify(records)}`);
      return records;
    },
    { timeout: 10_000, interval: 20 },
  );
}

describe('search', () => {
  it('ranks the built-in corpus, honours limit and records calls with their traceparent', async () => {
    const ledger = join(resources.tempDir(), 'search.jsonl');
    const { client, transport } = await resources.stdioClient('search', { SEARCH_LEDGER: ledger });

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['get_document', 'search']);
    for (const tool of tools) expect(tool.annotations?.readOnlyHint).toBe(true);

    const result = await client.callTool({
      name: 'search',
      arguments: { query: 'trace context propagation', limit: 3 },
      _meta: { traceparent: TRACEPARENT },
    });
    expect(result.isError).toBeFalsy();
    const { hits } = result.structuredContent as {
      hits: Array<{ id: string; title: string; score: number }>;
    };
    expect(hits).toHaveLength(3);
    expect(hits[0]?.id).toBe('tracing-context');
    expect(hits.map((hit) => hit.score)).toEqual([...hits.map((hit) => hit.score)].sort((a, b) => b - a));
    expect(textOf(result)).toContain('tracing-context');

    const defaults = await client.callTool({ name: 'search', arguments: { query: 'queue' } });
    expect((defaults.structuredContent as { hits: unknown[] }).hits).toHaveLength(5);

    expect(readLedger(ledger)).toEqual([
      expect.objectContaining({
        tool: 'search',
        arguments: { query: 'trace context propagation', limit: 3 },
        traceparent: TRACEPARENT,
        pid: transport.pid,
        time: expect.any(String),
      }),
      expect.objectContaining({ tool: 'search', arguments: { query: 'queue', limit: 5 } }),
    ]);
    expect(readLedger(ledger)[1]).not.toHaveProperty('traceparent');
  });

  it('returns a document by id and isError for an unknown id', async () => {
    const { client } = await resources.stdioClient('search');
    const found = await client.callTool({ name: 'get_document', arguments: { id: 'mcp-overview' } });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toMatchObject({
      id: 'mcp-overview',
      title: expect.stringContaining('Model'),
    });

    const missing = await client.callTool({ name: 'get_document', arguments: { id: 'no-such-doc' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/not found.*no-such-doc/i);
  });

  it('finds documents for every search__search query README.md shows', async () => {
    // The README's examples (curl, the client, the CLI, the MCP inspector) must answer hits, not
    // "No document matches": a first run of them is how people meet the search server.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const queries = [...readme.matchAll(/\bquery["']?\s*[:=]\s*["']?([A-Za-z0-9 _-]+)/g)].map((match) =>
      String(match[1]).trim(),
    );
    expect(queries.length).toBeGreaterThanOrEqual(4);
    const { client } = await resources.stdioClient('search');
    for (const query of new Set(queries)) {
      const result = await client.callTool({ name: 'search', arguments: { query } });
      expect((result.structuredContent as { hits: unknown[] }).hits.length, query).toBeGreaterThan(0);
    }
  });
});

describe('notes', () => {
  it('add_note writes exactly a start and a done record; list and delete see it', async () => {
    const ledger = join(resources.tempDir(), 'notes.jsonl');
    const { client } = await resources.stdioClient('notes', { NOTES_LEDGER: ledger });

    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'add_note')?.annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
      destructiveHint: false,
    });

    const added = await client.callTool({
      name: 'add_note',
      arguments: { text: 'buy milk' },
      _meta: { traceparent: TRACEPARENT },
    });
    const { id } = added.structuredContent as { id: string };
    expect(textOf(added)).toBe(id);
    expect(readLedger(ledger)).toEqual([
      expect.objectContaining({
        tool: 'add_note',
        phase: 'start',
        text: 'buy milk',
        traceparent: TRACEPARENT,
      }),
      expect.objectContaining({
        tool: 'add_note',
        phase: 'done',
        text: 'buy milk',
        id,
        traceparent: TRACEPARENT,
      }),
    ]);

    const listed = await client.callTool({ name: 'list_notes', arguments: {} });
    expect(listed.structuredContent).toEqual({ notes: [{ id, text: 'buy milk' }] });

    const deleted = await client.callTool({ name: 'delete_note', arguments: { id } });
    expect(deleted.isError).toBeFalsy();
    const again = await client.callTool({ name: 'delete_note', arguments: { id } });
    expect(again.isError).toBe(true);
    const unknown = await client.callTool({ name: 'delete_note', arguments: { id: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/not found/i);
    expect((await client.callTool({ name: 'list_notes', arguments: {} })).structuredContent).toEqual({
      notes: [],
    });
  });

  it('two server processes share one ledger file', async () => {
    const ledger = join(resources.tempDir(), 'notes.jsonl');
    const a = await resources.stdioClient('notes', { NOTES_LEDGER: ledger });
    const b = await resources.stdioClient('notes', { NOTES_LEDGER: ledger });

    const [fromA, fromB] = await Promise.all([
      a.client.callTool({ name: 'add_note', arguments: { text: 'from a' } }),
      b.client.callTool({ name: 'add_note', arguments: { text: 'from b' } }),
    ]);
    const ids = [fromA, fromB].map((result) => (result.structuredContent as { id: string }).id);
    const listed = await b.client.callTool({ name: 'list_notes', arguments: {} });
    const notes = (listed.structuredContent as { notes: Array<{ id: string }> }).notes;
    expect(notes.map((note) => note.id).sort()).toEqual([...ids].sort());
    expect(new Set(readLedger(ledger).map((record) => record.pid))).toEqual(
      new Set([a.transport.pid, b.transport.pid]),
    );
  });

  it('a caller killed mid-call leaves a start without a done', async () => {
    const ledger = join(resources.tempDir(), 'notes.jsonl');
    const { client, transport } = await resources.stdioClient('notes', { NOTES_LEDGER: ledger });
    const pid = transport.pid;
    if (pid === null) throw new Error('no pid');

    const call = client.callTool({ name: 'add_note', arguments: { text: 'doomed', delayMs: 60_000 } });
    call.catch(() => {}); // rejected by the close below
    await waitForLedger(ledger, (records) => records.length === 1);
    // The caller goes away: stdin closes and the server exits without finishing the write.
    await client.close();
    await expect(call).rejects.toThrow();
    expect(isAlive(pid)).toBe(false);
    expect(readLedger(ledger)).toEqual([
      expect.objectContaining({ tool: 'add_note', phase: 'start', text: 'doomed' }),
    ]);
  });
});

describe('slow', () => {
  it('sleep sends progress notifications up to the total', async () => {
    const ledger = join(resources.tempDir(), 'slow.jsonl');
    const { client } = await resources.stdioClient('slow', { SLOW_LEDGER: ledger });
    const progress: Progress[] = [];
    const result = await client.callTool(
      { name: 'sleep', arguments: { ms: 300, progressEveryMs: 50 } },
      undefined,
      { onprogress: (update) => progress.push(update) },
    );
    expect(result.structuredContent).toEqual({ slept: 300 });
    // The SDK client drops a progress notification that lands after the response has settled
    // the request, so the final 300 may or may not be seen; every earlier step must be.
    expect(progress.map((update) => update.progress).slice(0, 5)).toEqual([50, 100, 150, 200, 250]);
    expect(progress.length === 5 || progress[5]?.progress === 300).toBe(true);
    expect(progress.every((update) => update.total === 300)).toBe(true);
    expect(readLedger(ledger).map((record) => `${record.tool}:${record.phase}`)).toEqual([
      'sleep:start',
      'sleep:done',
    ]);

    // Without a progress token the server sends none (and still answers).
    const quiet = await client.callTool({ name: 'sleep', arguments: { ms: 10 } });
    expect(quiet.structuredContent).toEqual({ slept: 10 });
  });

  it('a client timeout cancels hang, and the server records the cancellation', async () => {
    const ledger = join(resources.tempDir(), 'slow.jsonl');
    const { client } = await resources.stdioClient('slow', { SLOW_LEDGER: ledger });
    const call = client.callTool(
      { name: 'hang', arguments: {}, _meta: { traceparent: TRACEPARENT } },
      undefined,
      {
        timeout: 300,
      },
    );
    await expect(call).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    await expect(call).rejects.toBeInstanceOf(McpError);
    const records = await waitForLedger(ledger, (all) => all.some((record) => record.phase === 'cancelled'));
    expect(records).toEqual([
      expect.objectContaining({ tool: 'hang', phase: 'start', traceparent: TRACEPARENT }),
      expect.objectContaining({
        tool: 'hang',
        phase: 'cancelled',
        traceparent: TRACEPARENT,
        reason: expect.stringMatching(/timed out/i),
      }),
    ]);
    // The session survives the cancellation.
    expect((await client.callTool({ name: 'sleep', arguments: { ms: 0 } })).structuredContent).toEqual({
      slept: 0,
    });
  });

  it('sleep stops when the caller aborts it', async () => {
    const ledger = join(resources.tempDir(), 'slow.jsonl');
    const { client } = await resources.stdioClient('slow', { SLOW_LEDGER: ledger });
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'sleep', arguments: { ms: 600_000, progressEveryMs: 20 } },
      undefined,
      {
        signal: abort.signal,
        onprogress: () => abort.abort('user gave up'),
      },
    );
    await expect(call).rejects.toThrow();
    const records = await waitForLedger(ledger, (all) => all.some((record) => record.phase === 'cancelled'));
    expect(records.map((record) => `${record.tool}:${record.phase}`)).toEqual([
      'sleep:start',
      'sleep:cancelled',
    ]);
    expect(records[1]?.reason).toBe('user gave up');
  });
});

describe('recorder', () => {
  it('record returns and records precise start/end times; echo answers at once', async () => {
    const ledger = join(resources.tempDir(), 'recorder.jsonl');
    const { client } = await resources.stdioClient('recorder', { RECORDER_LEDGER: ledger });
    const before = performance.timeOrigin + performance.now();
    const result = await client.callTool({ name: 'record', arguments: { ms: 50, label: 'a' } });
    const after = performance.timeOrigin + performance.now();
    const { label, start, end } = result.structuredContent as { label: string; start: number; end: number };
    expect(label).toBe('a');
    // Same wall clock in both processes; the slack only covers how each derives timeOrigin.
    expect(start).toBeGreaterThanOrEqual(before - 5);
    expect(end).toBeLessThanOrEqual(after + 5);
    expect(end - start).toBeGreaterThanOrEqual(49);
    expect(Number.isInteger(start) && Number.isInteger(end)).toBe(false);
    expect(readLedger(ledger)).toEqual([expect.objectContaining({ tool: 'record', label: 'a', start, end })]);

    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'record')?.annotations?.idempotentHint).toBe(true);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ping' } }))).toBe('ping');
    expect(readLedger(ledger)).toHaveLength(1);
  });
});

describe('crashy', () => {
  it('whoami names the process; crash kills it mid-call and closes the transport', async () => {
    const ledger = join(resources.tempDir(), 'crashy.jsonl');
    const { client, transport } = await resources.stdioClient('crashy', { CRASHY_LEDGER: ledger });
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    expect(who.structuredContent).toEqual({ pid: transport.pid, startedAt: expect.any(String) });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');

    const closed = new Promise<void>((resolve) => {
      client.onclose = resolve;
    });
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toMatchObject({
      code: ErrorCode.ConnectionClosed,
    });
    await closed;
    expect(readLedger(ledger).map((record) => record.tool)).toEqual(['whoami', 'echo', 'crash']);
  });
});

describe('Streamable HTTP', () => {
  it('search: prints one listening line, serves independent sessions, exits on SIGTERM', async () => {
    const ledger = join(resources.tempDir(), 'search.jsonl');
    const { child, url, firstLine } = await resources.httpServer('search', {
      env: { SEARCH_LEDGER: ledger },
    });
    expect(firstLine).toMatch(/^\{"listening":"http:\/\/127\.0\.0\.1:\d+\/mcp"\}$/);

    const a = await resources.httpClient(url);
    const b = await resources.httpClient(url);
    expect(a.transport.sessionId).toBeDefined();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);

    const result = await a.client.callTool({ name: 'search', arguments: { query: 'mcp sessions' } });
    expect((result.structuredContent as { hits: Array<{ id: string }> }).hits[0]?.id).toBe('mcp-sessions');
    const missing = await b.client.callTool({ name: 'get_document', arguments: { id: 'nope' } });
    expect(missing.isError).toBe(true);
    expect(readLedger(ledger).map((record) => record.pid)).toEqual([child.pid, child.pid]);

    expect(await stop(child)).toBe(0);
  });

  it('rejects unknown sessions, missing session ids and other paths', async () => {
    const { url } = await resources.httpServer('search');
    const unknown = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'not-a-session',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(400);
    expect((await fetch(new URL('/other', url))).status).toBe(404);
    const notInitialize = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(notInitialize.status).toBe(400);
  });

  it('recorder: port from MCP_HTTP_PORT, calls recorded by the HTTP server process', async () => {
    const ledger = join(resources.tempDir(), 'recorder.jsonl');
    const { child, url } = await resources.httpServer('recorder', {
      args: [],
      env: { MCP_HTTP_PORT: '0', RECORDER_LEDGER: ledger },
    });
    const { client } = await resources.httpClient(url);
    const results = await Promise.all(
      ['x', 'y'].map((label) =>
        client.callTool({
          name: 'record',
          arguments: { ms: 100, label },
          _meta: { traceparent: TRACEPARENT },
        }),
      ),
    );
    const [x, y] = results.map((result) => result.structuredContent as { start: number; end: number });
    // Both calls ran at the same time inside one session.
    expect(x && y && x.start < y.end && y.start < x.end).toBe(true);
    const records = readLedger(ledger);
    expect(records).toHaveLength(2);
    expect(records.every((record) => record.pid === child.pid && record.traceparent === TRACEPARENT)).toBe(
      true,
    );
  });

  it('slow: progress and cancellation work over HTTP too', async () => {
    const ledger = join(resources.tempDir(), 'slow.jsonl');
    const { url } = await resources.httpServer('slow', { env: { SLOW_LEDGER: ledger } });
    const { client } = await resources.httpClient(url);
    const progress: number[] = [];
    await client.callTool({ name: 'sleep', arguments: { ms: 100, progressEveryMs: 25 } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
    });
    expect(progress.slice(0, 3)).toEqual([25, 50, 75]); // the last one may race the response

    await expect(
      client.callTool({ name: 'hang', arguments: {} }, undefined, { timeout: 200 }),
    ).rejects.toMatchObject({
      code: ErrorCode.RequestTimeout,
    });
    await waitForLedger(ledger, (all) =>
      all.some((record) => record.tool === 'hang' && record.phase === 'cancelled'),
    );
  });
});

describe('stdio lifecycle', () => {
  it('exits when stdin closes, without writing to stdout', async () => {
    const child = spawn(process.execPath, serverArgs('search'), {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    resources.defer(async () => {
      await stop(child);
    });
    const stdout: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    const exited = once(child, 'exit');
    child.stdin.end();
    const [code] = await exited;
    expect(code).toBe(0);
    expect(Buffer.concat(stdout).toString()).toBe('');
  });

  it('exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, serverArgs('notes'), {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    resources.defer(async () => {
      await stop(child);
    });
    // Once the server answers a ping its signal handlers are installed, so SIGTERM must
    // end it with code 0 rather than the default signal death (code null).
    const lines = createInterface({ input: child.stdout });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    const [line] = await once(lines, 'line');
    expect(JSON.parse(String(line))).toMatchObject({ id: 1, result: {} });
    expect(await stop(child)).toBe(0);
  });
});
