import type { ToolCallOutcome } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlackholeProxy } from '../support/blackhole-proxy.ts';
import { SuiteContention } from '../support/contention.ts';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { descendants, type TestProcess } from '../support/processes.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const LOCK_MS = 3_000;
/** Room for a loaded 2-core machine on top of the lock duration (timers and replies run late there). */
const SLACK_MS = 2_500;
const FIRST_CALL_MS = 8_000;

interface Run {
  pid: number;
  start: number;
  end: number | undefined;
  how: string | undefined;
}

/** The slow server's ledger as one run per call: its start, and its end ('done' or 'cancelled'). */
function runs(path: string): Run[] {
  const open = new Map<number, Run>();
  const all: Run[] = [];
  for (const row of readLedger(path)) {
    const pid = Number(row.pid);
    const at = Date.parse(String(row.time));
    if (row.phase === 'start') {
      const run: Run = { pid, start: at, end: undefined, how: undefined };
      open.set(pid, run);
      all.push(run);
    } else {
      const run = open.get(pid);
      if (run) {
        run.end = at;
        run.how = String(row.phase);
        open.delete(pid);
      }
    }
  }
  return all;
}

/**
 * Issue 20 item 5: a worker cut off from Redis by a network partition (its commands hang, nothing is
 * reset) must notice that its lock is at risk within the lock duration, not when the link heals:
 * it aborts its call (notifications/cancelled), takes no work while Redis is silent, and resumes when
 * Redis answers again. On a `concurrency: 1` server the overlap of its call with the next owner's is
 * then bounded by the lock duration, however long the partition lasts.
 */
describe('a worker partitioned from Redis', () => {
  const redis = new DedicatedRedis({ persistent: false });
  const proxies: BlackholeProxy[] = [];
  let fleet: Fleet;
  const workers: Array<{ id: string; process: TestProcess; proxy: BlackholeProxy }> = [];

  const contention = new SuiteContention('redis partition');

  beforeAll(async () => {
    await contention.start();
    await redis.start();
    fleet = new Fleet(
      'partition',
      (dir) => ({
        slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, idempotent: ['sleep'] }),
      }),
      { lockDurationMs: LOCK_MS, stalledIntervalMs: 500 },
      {},
      redis.url,
    );
    // Each worker through a proxy of its own: whichever takes the first call is the one cut off.
    for (const id of ['w-left', 'w-right']) {
      const proxy = await BlackholeProxy.start(redis.url);
      proxies.push(proxy);
      workers.push({ id, proxy, process: await fleet.startWorker({ id, redisUrl: proxy.url }) });
    }
  });

  afterAll(async () => {
    await contention.stop();
    for (const proxy of proxies) proxy.heal();
    await fleet?.close();
    for (const proxy of proxies) await proxy.close();
    await redis.stop();
  });

  it('aborts its call within the lock duration, bounds the overlap by it, and resumes after the heal', async () => {
    const dispatcher = await fleet.dispatcher();
    const ledger = fleet.path('slow.jsonl');
    const call = (toolCallId: string, ms: number): Promise<ToolCallOutcome> =>
      dispatcher.dispatch({
        jobId: 'partition',
        toolCallId,
        server: 'slow',
        tool: 'sleep',
        arguments: { ms },
        queueTimeoutMs: 120_000,
      });

    const first = call('first', FIRST_CALL_MS);
    await waitForLedger(ledger, (rows) => rows.some((row) => row.phase === 'start'), 30_000);
    const firstRun = runs(ledger)[0] as Run;
    const owner = workers.find((worker) => descendants(worker.process.pid).includes(firstRun.pid));
    const other = workers.find((worker) => worker !== owner);
    if (!owner || !other) throw new Error(`no worker runs the slow server with pid ${firstRun.pid}`);

    owner.proxy.blackhole();
    const cutAt = Date.now();
    const second = call('second', 500);
    const aborted = await owner.process.waitFor(
      (log) => log.msg === 'lock lost: aborting the call' && log.reason === 'redis_unreachable',
      `${owner.id} aborting its call while partitioned`,
      LOCK_MS * 3 + 20_000,
    );
    const abortedAfterMs = Date.now() - cutAt;
    await owner.process.waitFor(
      (log) => log.msg === 'stopped consuming queue: Redis unreachable',
      `${owner.id} to stop taking calls`,
      10_000,
    );

    // The other worker takes over once the lock expired: the first call again (idempotent) or the next.
    await waitForLedger(ledger, (rows) => rows.filter((row) => row.phase === 'start').length >= 2, 30_000);
    const [mine, next] = runs(ledger) as [Run, Run];
    await waitForLedger(ledger, () => runs(ledger)[0]?.end !== undefined, 10_000);
    const ownerEnd = runs(ledger)[0]?.end as number;
    const overlapMs = Math.max(0, ownerEnd - next.start);
    console.log(
      JSON.stringify({
        lockDurationMs: LOCK_MS,
        abortedAfterMs,
        silentMs: aborted.silentMs,
        ownerRun: { start: mine.start, end: ownerEnd, how: runs(ledger)[0]?.how },
        nextRunStart: next.start,
        overlapMs,
      }),
    );
    expect(abortedAfterMs).toBeLessThan(LOCK_MS + SLACK_MS);
    // The abort reached the server (notifications/cancelled): the partitioned call did not run on.
    expect(runs(ledger)[0]?.how).toBe('cancelled');
    expect(ownerEnd - cutAt).toBeLessThan(LOCK_MS + SLACK_MS);
    expect(next.pid).not.toBe(mine.pid);
    expect(overlapMs).toBeLessThanOrEqual(LOCK_MS);

    // Both calls end with the other worker's outcome while the partition still lasts.
    const outcomes = await Promise.all([first, second]);
    expect(outcomes.map((outcome) => [outcome.status, outcome.workerId])).toEqual([
      ['ok', other.id],
      ['ok', other.id],
    ]);
    expect(owner.proxy.isDark).toBe(true);

    // The heal: the owner hears Redis again and takes work. The other worker is cut off now, so the
    // next call can only be the healed one's.
    owner.proxy.heal();
    await owner.process.waitFor(
      (log) => log.msg === 'Redis answers again',
      `${owner.id} to hear Redis`,
      20_000,
    );
    other.proxy.blackhole();
    const after = await call('after-heal', 100);
    expect([after.status, after.workerId]).toEqual(['ok', owner.id]);
    other.proxy.heal();
  });
});
