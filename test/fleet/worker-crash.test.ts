import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { freezeWithChildren, isAlive, killAll } from '../support/processes.ts';

/** Processes a test froze; killed at the end even when the test failed before it could. */
const frozen: number[] = [];

/**
 * docs/semantics.md §2: a worker SIGKILLed mid-call. The lock it held expires, BullMQ hands the job
 * to a live worker, and that worker re-runs an idempotent call but reports a non-idempotent one
 * `indeterminate` without running it again.
 */
describe('a worker killed mid-call', () => {
  let fleet: Fleet;

  beforeAll(() => {
    fleet = new Fleet('crash', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      recorder: exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/recorder.jsonl` },
        trusted: true,
        timeoutMs: 30_000,
      }),
    }));
  });

  afterAll(async () => {
    killAll(frozen);
    await fleet?.close();
  });

  it('reports a non-idempotent call indeterminate and never runs it twice', async () => {
    const doomed = await fleet.startWorker({ id: 'doomed-1', servers: ['notes'] });
    const dispatcher = await fleet.dispatcher();
    const pending = dispatcher.dispatch({
      jobId: 'crash',
      toolCallId: 'note',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'write once', delayMs: 20_000 },
    });
    // The server has the call: it wrote its "start" record and is holding the request open.
    await waitForLedger(fleet.path('notes.jsonl'), (rows) => rows.some((row) => row.text === 'write once'));
    const orphans = freezeWithChildren(doomed, frozen);
    await fleet.startWorker({ id: 'survivor-1', servers: ['notes'] });
    await doomed.crash();
    fleet.group.adopt(orphans);
    // The orphaned server wakes up to find its client gone.
    for (const pid of orphans) process.kill(pid, 'SIGCONT');

    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'indeterminate', executed: 'unknown', workerId: 'survivor-1' });
    const runs = readLedger(fleet.path('notes.jsonl')).filter(
      (row) => row.text === 'write once' && row.phase === 'start',
    );
    expect(runs).toHaveLength(1);
    // The killed worker's stdio child saw its stdin close and exited with it.
    await Promise.all(orphans.map((pid) => waitUntil(() => !isAlive(pid), `orphan ${pid} to exit`)));
  });

  it('completes an idempotent call on another worker', async () => {
    const doomed = await fleet.startWorker({ id: 'doomed-2', servers: ['recorder'] });
    const dispatcher = await fleet.dispatcher();
    const pending = dispatcher.dispatch({
      jobId: 'crash',
      toolCallId: 'record',
      server: 'recorder',
      tool: 'record',
      arguments: { ms: 4_000, label: 'rerun me' },
    });
    await doomed.waitFor(
      (log) => log.msg === 'tool call sent' && log.tool === 'record',
      'the call to be sent',
    );
    // The server is frozen too: woken later, it could still finish the first run and record it.
    const orphans = freezeWithChildren(doomed, frozen);
    await fleet.startWorker({ id: 'survivor-2', servers: ['recorder'] });
    await doomed.crash();
    killAll(orphans);

    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', workerId: 'survivor-2' });
    const records = readLedger(fleet.path('recorder.jsonl')).filter((row) => row.label === 'rerun me');
    expect(records).toHaveLength(1);
  });
});

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const { setTimeout: delay } = await import('node:timers/promises');
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}
