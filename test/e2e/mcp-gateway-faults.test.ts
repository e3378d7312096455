import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { recordedIntervals as intervals, overlaps } from '../support/intervals.ts';
import { waitForLedger } from '../support/ledger.ts';
import { connectGateway, type GatewayClient } from '../support/mcp-clients.ts';
import { freezeWithChildren, killAll } from '../support/processes.ts';

/** Processes a test froze; killed at the end even when the test failed before it could. */
const frozen: number[] = [];

/** docs/semantics.md through /mcp: at-most-once for writes and per-server serialization hold for MCP clients too. */
describe('the /mcp gateway under faults, contention and fleet changes', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const clients: GatewayClient[] = [];

  beforeAll(async () => {
    deployment = new Deployment('mcp-faults', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      // concurrency 1 (the default): one call at a time across the whole fleet.
      recorder: exampleServer('recorder', { env: { RECORDER_LEDGER: `${dir}/recorder.jsonl` } }),
      // No worker serves it until the list_changed test starts one.
      late: exampleServer('search', { trusted: true }),
    }));
    orchestrator = await deployment.startOrchestrator('o-mcp-faults');
  });

  afterAll(async () => {
    killAll(frozen);
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await deployment?.close();
  });

  it('reports a write whose worker was SIGKILLed mid-call as one that may have run, and never runs it twice', async () => {
    const doomed = await deployment.startWorker({ id: 'doomed', servers: ['notes'] });
    const client = await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2026-07-28');
    clients.push(client);
    const text = 'written at most once through /mcp';
    const pending = client.callTool(
      { name: 'notes__add_note', arguments: { text, delayMs: 20_000 } },
      undefined,
      {
        timeout: 300_000,
      },
    );
    pending.catch(() => undefined);
    await waitForLedger(
      deployment.path('notes.jsonl'),
      (rows) => rows.some((row) => row.text === text),
      60_000,
    );
    const orphans = freezeWithChildren(doomed, frozen);
    await deployment.startWorker({ id: 'survivor', servers: ['notes'] });
    await doomed.crash();
    deployment.group.adopt(orphans);
    for (const pid of orphans) process.kill(pid, 'SIGCONT');

    const result: Json = await pending;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/^\[indeterminate\] /);
    expect(result.content[0].text).toContain('may or may not have run');
    expect(result._meta['io.switchyard/outcome']).toMatchObject({
      status: 'indeterminate',
      executed: 'unknown',
    });
    const starts = readLedger(deployment.path('notes.jsonl')).filter(
      (row) => row.text === text && row.phase === 'start',
    );
    expect(starts).toHaveLength(1);
  });

  it('never overlaps two calls to a concurrency-1 server made by two MCP clients at once', async () => {
    await Promise.all([
      deployment.startWorker({ id: 'rec-one', servers: ['recorder'] }),
      deployment.startWorker({ id: 'rec-two', servers: ['recorder'] }),
    ]);
    const [first, second] = await Promise.all([
      connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2025-11-25'),
      connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2026-07-28'),
    ]);
    clients.push(first, second);
    const perClient = 20;
    const burst = (client: GatewayClient, name: string) =>
      Array.from({ length: perClient }, (_, index) =>
        client.callTool(
          { name: 'recorder__record', arguments: { ms: 20, label: `${name}-${index}` } },
          undefined,
          {
            timeout: 300_000,
          },
        ),
      );
    const results: Json[] = await Promise.all([...burst(first, 'first'), ...burst(second, 'second')]);
    expect(results.filter((result) => !result.isError)).toHaveLength(perClient * 2);
    const recorded = intervals(deployment.path('recorder.jsonl'));
    expect(recorded).toHaveLength(perClient * 2);
    expect(recorded.filter((row) => row.label?.startsWith('first-'))).toHaveLength(perClient);
    expect(recorded.filter((row) => row.label?.startsWith('second-'))).toHaveLength(perClient);
    expect(overlaps(recorded)).toEqual([]);
  });

  it('sends tools/list_changed on a 2026-07-28 subscriptions/listen stream when the fleet catalog changes', async () => {
    const client = new Client(
      { name: 'list-changed-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', orchestrator.url), {
        requestInit: { headers: { authorization: `Bearer ${TEAM_KEYS.alpha}` } },
      }),
    );
    clients.push(client as unknown as GatewayClient);
    const before = (await client.listTools()).tools.map((tool) => tool.name);
    expect(before.some((name) => name.startsWith('late__'))).toBe(false);
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
    );
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      await deployment.startWorker({ id: 'late-worker', servers: ['late'] });
      await changed;
      const after = (await client.listTools()).tools.map((tool) => tool.name);
      expect(after).toContain('late__search');
    } finally {
      await subscription.close();
    }
  });

  it('ends an mcp job whose replica died mid-call from its queue job, and a retry with the key gets that outcome', async () => {
    await deployment.startWorker({ id: 'notes-2', servers: ['notes'] });
    const doomed = await deployment.startOrchestrator('o-mcp-doomed');
    const text = 'its replica dies while the tool runs';
    const key = `orphan-${Date.now()}`;
    const client = await connectGateway(doomed.url, TEAM_KEYS.alpha, '2025-11-25');
    const call = client.callTool(
      {
        name: 'notes__add_note',
        arguments: { text, delayMs: 3_000 },
        _meta: { 'io.switchyard/idempotency-key': key },
      },
      undefined,
      { timeout: 300_000 },
    );
    call.catch(() => undefined);
    await waitForLedger(
      deployment.path('notes.jsonl'),
      (rows) => rows.some((row) => row.text === text),
      60_000,
    );
    await doomed.process.crash();

    // A surviving replica reads the outcome from the call's queue job and ends the job.
    const db = new pg.Client({ connectionString: deployment.databaseUrl });
    await db.connect();
    let job: Json;
    try {
      const until = Date.now() + 180_000;
      for (;;) {
        const { rows } = await db.query(
          `SELECT j.id, j.status, c.status AS "callStatus" FROM ${deployment.schema}.jobs j
           JOIN ${deployment.schema}.tool_calls c ON c.job_id = j.id
           WHERE j.kind = 'mcp' AND j.idempotency_key = $1`,
          [`mcp:${key}`],
        );
        job = rows[0];
        if (job?.status !== undefined && job.status !== 'running') break;
        if (Date.now() > until) throw new Error(`the orphaned job did not end: ${JSON.stringify(job)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    } finally {
      await db.end();
    }
    expect(job).toMatchObject({ status: 'succeeded', callStatus: 'ok' });
    const retry: Json = await (
      await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2026-07-28')
    ).callTool({
      name: 'notes__add_note',
      arguments: { text, delayMs: 3_000 },
      _meta: { 'io.switchyard/idempotency-key': key },
    });
    expect(retry._meta['io.switchyard/outcome']).toMatchObject({ status: 'ok', jobId: job.id });
    const rows = readLedger(deployment.path('notes.jsonl')).filter((row) => row.text === text);
    expect(rows.filter((row) => row.phase === 'start')).toHaveLength(1);
    expect(retry.structuredContent).toEqual({ id: rows.find((row) => row.phase === 'done')?.id });
  }, 300_000); // the sweep waits 30 s after the call settles, on a machine that may be busy
});
