import { setTimeout as delay } from 'node:timers/promises';
import type { ToolCallOutcome } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, FAST_WORKER_SETTINGS, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const WRITES = 4;

/**
 * Issue 8 item 9: writes that finish while Redis is paused (SIGSTOP) for longer than the job lock. The
 * workers hold the results; when Redis answers again the lock has expired, but nobody took the jobs
 * (the stalled check runs rarely here, so it cannot move them first): the results are recorded, not
 * reported `indeterminate`.
 */
describe('results that finish while Redis is paused', () => {
  const redis = new DedicatedRedis();
  let fleet: Fleet;
  let paused = false;

  beforeAll(async () => {
    await redis.start();
    fleet = new Fleet(
      'redis-pause',
      (dir) => ({
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, concurrency: WRITES }),
      }),
      { stalledIntervalMs: 120_000 },
      {},
      redis.url,
    );
    await fleet.startWorker({ servers: ['notes'] });
  });

  afterAll(async () => {
    if (paused) process.kill(redis.pid as number, 'SIGCONT');
    await fleet?.close();
    await redis.stop();
  });

  it('records the results the worker held once Redis answers, as long as the jobs are still its own', async () => {
    const dispatcher = await fleet.dispatcher();
    const texts = Array.from({ length: WRITES }, (_, index) => `during pause ${index}`);
    const pending = texts.map((text, index) =>
      dispatcher.dispatch({
        jobId: 'pause',
        toolCallId: `write-${index}`,
        server: 'notes',
        tool: 'add_note',
        // Shorter than half the lock: the worker cannot tell from the clock that its lock is at risk.
        arguments: { text, delayMs: 700 },
      }),
    );
    const ledger = fleet.path('notes.jsonl');
    await waitForLedger(ledger, (rows) => rows.filter((row) => row.phase === 'start').length === WRITES);
    process.kill(redis.pid as number, 'SIGSTOP');
    paused = true;
    await waitForLedger(ledger, (rows) => rows.filter((row) => row.phase === 'done').length === WRITES);
    // The fault itself: Redis stays frozen until every lock has expired.
    await delay(FAST_WORKER_SETTINGS.lockDurationMs + 1_500);
    process.kill(redis.pid as number, 'SIGCONT');
    paused = false;

    const timer = new AbortController();
    const deadline = delay(30_000, undefined, { signal: timer.signal }).then((): ToolCallOutcome[] => {
      throw new Error('the held results were not recorded within 30 s after Redis resumed');
    });
    deadline.catch(() => undefined);
    const outcomes = await Promise.race([Promise.all(pending), deadline]).finally(() => timer.abort());
    expect(outcomes.map((outcome) => [outcome.status, outcome.executed])).toEqual(
      texts.map(() => ['ok', 'yes']),
    );
    for (const text of texts) {
      expect(readLedger(ledger).filter((row) => row.text === text && row.phase === 'start')).toHaveLength(1);
    }
  });
});
