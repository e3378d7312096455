import { setTimeout as delay } from 'node:timers/promises';
import { type ToolCallOutcome, toolCallJobId } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SuiteContention } from '../support/contention.ts';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { SentinelGroup } from '../support/redis-sentinel.ts';

const WRITES = Array.from({ length: 6 }, (_, index) => `write ${index}`);
const JOB = 'failover';

/**
 * Issue 20 item 4: a Sentinel failover to a replica that had not received the newest writes. The
 * replica is held at a known offset by a ReplicationGate (the lag is the test's choice, not a timing
 * guess): the calls' jobs reached it, their at-most-once markers and outcomes did not. Then the primary
 * is SIGKILLed and Sentinel promotes the replica; workers, dispatcher and the suite's own connections
 * follow it through Sentinel. The jobs are back in the wait list there, without markers.
 *
 * - With the replica wait off, every write that ran on the old primary runs a second time: the bug.
 * - With it on, no write was sent without a replica confirming its marker — the held replica confirms
 *   none, so they ended `unavailable` unsent on the old primary, and each runs exactly once on the new
 *   one. The blocker, whose marker did reach the replica, is reported `indeterminate` there, not re-run.
 *
 * One notes server, concurrency 1 fleet-wide, two workers: the blocker runs while the writes queue behind
 * it, so they are in Redis (and replicated) before the gate holds and before any of them is fenced.
 */
describe.each([
  { label: 'on', replicaWait: { replicas: 'auto', timeoutMs: 500 }, runsPerWrite: 1 },
  { label: 'off', replicaWait: { replicas: 0 }, runsPerWrite: 2 },
])('a Sentinel failover to a lagging replica, replica wait $label', ({ replicaWait, runsPerWrite }) => {
  const group = new SentinelGroup();
  let fleet: Fleet | undefined;

  const contention = new SuiteContention('sentinel failover');

  beforeAll(async () => {
    await contention.start();
    await group.start();
    fleet = new Fleet(
      'sentinel-failover',
      (dir) => ({
        notes: exampleServer('notes', {
          env: { NOTES_LEDGER: `${dir}/notes.jsonl` },
          concurrency: 1,
          // Outlives the blocker, the failover and the stalled check on the new primary.
          queueTimeoutMs: 180_000,
        }),
      }),
      { replicaWait },
      {},
      // Only its credentials would count: the primary comes from the sentinels.
      `redis://127.0.0.1:${group.primaryPort}`,
      '',
      group.seeds,
    );
    await Promise.all([
      fleet.startWorker({ servers: ['notes'], id: 'w1' }),
      fleet.startWorker({ servers: ['notes'], id: 'w2' }),
    ]);
  });

  afterAll(async () => {
    await contention.stop();
    // Bounded: a deployment whose Redis never came back must not hold the suite up.
    await Promise.race([fleet?.close(), delay(30_000)]);
    await group.stop();
  });

  it(`runs each write ${runsPerWrite === 1 ? 'once' : 'twice (the duplicates)'}`, async () => {
    if (!fleet) throw new Error('no fleet');
    const dispatcher = await fleet.dispatcher();
    const queue = dispatcher.queue('notes');
    const ledger = fleet.path('notes.jsonl');
    const call = (toolCallId: string, text: string, delayMs: number) =>
      dispatcher.dispatch({
        jobId: JOB,
        toolCallId,
        server: 'notes',
        tool: 'add_note',
        arguments: { text, delayMs },
      });

    const blocker = call('blocker', 'blocker', 8_000);
    await waitForLedger(ledger, (rows) => rows.some((row) => row.text === 'blocker'), 60_000);
    const writes = WRITES.map((text, index) => call(`write-${index}`, text, 50));
    await untilQueued(queue, WRITES.length);
    await group.replicaCaughtUp();
    group.gate?.hold();
    if (readLedger(ledger).some((row) => row.text === 'blocker' && row.phase === 'done')) {
      throw new Error('the blocker finished before the gate held: the writes ran unheld, nothing is shown');
    }

    const settled: ToolCallOutcome[] = await Promise.all([blocker, ...writes]);
    expect(settled[0]).toMatchObject({ status: 'ok', executed: 'yes' });
    for (const outcome of settled.slice(1)) {
      if (runsPerWrite === 1) {
        // Refused unsent: the held replica never confirmed the marker.
        expect(outcome).toMatchObject({ status: 'unavailable', executed: 'no' });
        expect(outcome.error).toMatch(/^replica_wait: 0 of 1 Redis replica/);
      } else {
        expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      }
    }
    expect(group.gate?.heldBytes).toBeGreaterThan(0);

    await group.killPrimary();
    await group.promoted();
    // Through Sentinel, so only the new primary can answer: every call finished there too.
    await untilCompleted(queue, ['blocker', ...WRITES.map((_, index) => `write-${index}`)]);

    const rows = readLedger(ledger);
    const runs = (text: string) => rows.filter((row) => row.text === text && row.phase === 'start').length;
    expect(runs('blocker')).toBe(1);
    expect(WRITES.map(runs)).toEqual(WRITES.map(() => runsPerWrite));
    // The blocker's marker reached the replica: there it is reported, never run again.
    const blockerJob = await queue.getJob(toolCallJobId(JOB, 'blocker'));
    expect(blockerJob?.returnvalue).toMatchObject({ status: 'indeterminate', executed: 'unknown' });
  });
});

/** Resolves once `count` calls wait in the queue (the dispatcher adds them asynchronously). */
async function untilQueued(queue: Queue, count: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'prioritized');
    if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) >= count) return;
    if (Date.now() > until) throw new Error(`only ${JSON.stringify(counts)} queued after 30 s`);
    await delay(25);
  }
}

/** Resolves once every call is completed in the Redis the queue now reaches. */
async function untilCompleted(queue: Queue, toolCallIds: string[]): Promise<void> {
  const until = Date.now() + 120_000;
  for (;;) {
    const states = await Promise.all(toolCallIds.map((id) => queue.getJobState(toolCallJobId(JOB, id))));
    if (states.every((state) => state === 'completed')) return;
    if (Date.now() > until) throw new Error(`calls not completed on the new primary: ${states.join(', ')}`);
    await delay(250);
  }
}
