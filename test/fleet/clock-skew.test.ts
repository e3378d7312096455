import type { ToolCallOutcome } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SuiteContention } from '../support/contention.ts';
import { fakeTimeEnv } from '../support/fake-time.ts';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import type { TestProcess } from '../support/processes.ts';

const SKEW_S = 400;
const BLOCKER_MS = 5_000;
/** How far a queue wait or a timestamp may be from the truth on a loaded machine. */
const TOLERANCE_MS = 2_500;

/**
 * Issue 20 item 6: deadlines are stamped by the orchestrator and judged by a worker on another host.
 * A worker whose clock is 400 s ahead used to expire every call it took (its own clock against the
 * orchestrator's deadline) and report a queue wait of 400 s. Both now read Redis's clock (RedisClock):
 * the skewed worker runs a call that waited 5 s and reports that wait, not its clock's error.
 */
describe('a worker whose clock is far off', () => {
  let fleet: Fleet;
  let worker: TestProcess;

  const contention = new SuiteContention('clock skew');

  beforeAll(async () => {
    await contention.start();
    // Fails here, naming the package, when faketime is missing.
    const skewed = fakeTimeEnv(`+${SKEW_S}s`);
    fleet = new Fleet('clock-skew', (dir) => ({
      slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` } }),
    }));
    worker = await fleet.startWorker({ id: 'w-ahead', env: skewed });
  });

  afterAll(async () => {
    await contention.stop();
    await fleet?.close();
  });

  it('judges the deadline and measures the queue wait on Redis time', async () => {
    // The skew really is there: the worker measured its clock against Redis's.
    const synced = await worker.waitFor((log) => log.msg === 'clock synced to Redis', 'the clock sync');
    expect(Math.abs(Number(synced.offsetMs) + SKEW_S * 1000)).toBeLessThan(TOLERANCE_MS);

    const dispatcher = await fleet.dispatcher();
    const call = (toolCallId: string, ms: number): Promise<ToolCallOutcome> =>
      dispatcher.dispatch({
        jobId: 'skew',
        toolCallId,
        server: 'slow',
        tool: 'sleep',
        arguments: { ms },
        // Far less than the skew: judged on the worker's own clock, the waiting call would be long expired.
        queueTimeoutMs: 30_000,
      });
    const blocker = call('blocker', BLOCKER_MS);
    const started = waitForLedger(
      fleet.path('slow.jsonl'),
      (rows) => rows.some((row) => row.phase === 'start'),
      30_000,
    );
    // Judged on the skewed clock, the call would end `expired` before it ever reached the server.
    const endedUnrun = await Promise.race([started.then(() => undefined), blocker]);
    expect(
      endedUnrun && { status: endedUnrun.status, error: endedUnrun.error },
      'the first call ended without running',
    ).toBeUndefined();
    const queuedAt = Date.now();
    const waiting = call('waiting', 100);
    const [first, second] = await Promise.all([blocker, waiting]);
    const realWaitMs = Date.now() - queuedAt - second.runMs;
    console.log(
      JSON.stringify({
        skewS: SKEW_S,
        offsetMs: synced.offsetMs,
        blocker: { status: first.status, queuedMs: first.queuedMs, runMs: first.runMs },
        waiting: {
          status: second.status,
          queuedMs: second.queuedMs,
          runMs: second.runMs,
          error: second.error,
        },
        realWaitMs,
      }),
    );

    expect([first.status, first.executed]).toEqual(['ok', 'yes']);
    expect([second.status, second.executed]).toEqual(['ok', 'yes']);
    expect(second.workerId).toBe('w-ahead');
    // The wait it reports is the real one (about the blocker's run), not the clock's 400 s error.
    expect(Math.abs(second.queuedMs - realWaitMs)).toBeLessThan(TOLERANCE_MS);
    expect(second.queuedMs).toBeGreaterThan(BLOCKER_MS - TOLERANCE_MS);
    expect(first.queuedMs).toBeLessThan(TOLERANCE_MS);
    // Durations are measured on the worker's own machine, timestamps on the shared clock.
    expect(Math.abs(first.runMs - BLOCKER_MS)).toBeLessThan(TOLERANCE_MS);
    expect(Math.abs(second.finishedAt - Date.now())).toBeLessThan(TOLERANCE_MS * 2);
  });
});
