import { catalogStoreOf, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { type Interval, overlaps, recordedIntervals } from '../support/intervals.ts';
import { waitForLedger } from '../support/ledger.ts';
import type { LogLine, TestProcess } from '../support/processes.ts';
import { NoticeLog } from '../support/queue-jobs.ts';

/** Pings often, and a ping to a frozen server hangs (holding the session's only slot) instead of failing. */
const HANGING_PINGS = { pingIntervalMs: 100, pingTimeoutMs: 60_000, failureThreshold: 3 };

/**
 * Issue 8 item 1: a worker frozen (SIGSTOP) past worker.lockDurationMs loses its job to another worker
 * (BullMQ's stalled check); when it wakes (SIGCONT) it still has its pre-freeze copy of the job. It must
 * not send that call (the fence checks its lock token in the queue store) and must not record an outcome
 * for it.
 *
 * To freeze a worker exactly between taking a job and sending it, its MCP server is frozen first: the
 * worker's health ping to it then hangs and holds the session's in-flight slot, so the next call waits
 * for that slot after it was picked up and before it is sent.
 */
describe('a worker frozen past its lock', () => {
  let fleet: Fleet;
  let dispatcher: ToolCallDispatcher;
  /** Every outcome notice of the suite's calls, read from before the first dispatch. */
  let notices: NoticeLog;
  const frozen = new Set<number>();

  const pause = (pid: number) => {
    process.kill(pid, 'SIGSTOP');
    frozen.add(pid);
  };
  const resume = (pid: number) => {
    process.kill(pid, 'SIGCONT');
    frozen.delete(pid);
  };

  beforeAll(async () => {
    fleet = new Fleet('stall', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, health: HANGING_PINGS }),
      recorder: exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/recorder.jsonl` },
        trusted: true,
        timeoutMs: 30_000,
        health: HANGING_PINGS,
      }),
    }));
    dispatcher = await fleet.dispatcher();
    notices = new NoticeLog(await fleet.suiteStore());
    await notices.start();
  });

  afterEach(() => {
    // A stopped process cannot even die gracefully: wake everything a failed test left frozen.
    for (const pid of [...frozen]) resume(pid);
  });

  afterAll(async () => {
    await notices?.close();
    await fleet?.close();
  });

  /** The pid of a worker's stdio MCP server, from the worker's own heartbeat. */
  async function serverPid(workerId: string, server: string): Promise<number> {
    const until = Date.now() + 30_000;
    const catalog = catalogStoreOf(await fleet.suiteStore());
    while (Date.now() < until) {
      const beat = (await catalog.read(0)).workers.find((candidate) => candidate.workerId === workerId);
      const session = beat?.sessions[server];
      if (session?.pid && session.state === 'ready') return session.pid;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no heartbeat of ${workerId} with a ready ${server} session`);
  }

  /** Freezes the worker's MCP server and waits until a ping has been sent to it (and so hangs). */
  async function wedgeSession(worker: TestProcess, workerId: string, server: string): Promise<number> {
    const pid = await serverPid(workerId, server);
    const stoppedAt = Date.now();
    pause(pid);
    // Either a ping goes out after the freeze, or one sent just before it is still unanswered half a
    // second later (its slot still busy, so the next pings are skipped): both hang on the frozen server.
    await worker.waitFor(
      (log) =>
        log.server === server &&
        ((log.msg === 'ping sent' && Date.parse(String(log.time)) > stoppedAt) ||
          (log.msg === 'ping skipped: a request is in flight' &&
            Date.parse(String(log.time)) > stoppedAt + 500)),
      `a ping to the frozen ${server} server`,
    );
    return pid;
  }

  const about = (toolCallId: string) => (log: LogLine) => log.tool_call_id === toolCallId;

  /** Outcome notices announced for one call so far (the 'completed' path of every worker). */
  async function publishedOutcomes(server: string, toolCallId: string): Promise<number> {
    await notices.settled();
    return notices.count(toolQueueName(server), toolCallJobId('stall', toolCallId));
  }

  it('never sends a non-idempotent call again after waking without its lock', async () => {
    const stale = await fleet.startWorker({ id: 'frozen-a', servers: ['notes'] });
    const staleServer = await wedgeSession(stale, 'frozen-a', 'notes');
    const pending = dispatcher.dispatch({
      jobId: 'stall',
      toolCallId: 'write',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'fenced write' },
    });
    await stale.waitFor(
      (log) => log.msg === 'tool call picked up' && about('write')(log),
      'frozen-a to take the call',
    );
    pause(stale.pid);
    // frozen-a's lock expires; taker-b's stalled check hands it the job, which it sends.
    await fleet.startWorker({ id: 'taker-b', servers: ['notes'] });
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', workerId: 'taker-b' });

    resume(staleServer);
    resume(stale.pid);
    // Whichever comes first: the woken worker gives the call up, or its stale copy reaches the server.
    await Promise.any([
      stale.waitFor(
        (log) =>
          log.msg === 'lock lost before the send: call not sent, no outcome recorded' && about('write')(log),
        'frozen-a to give the call up',
      ),
      waitForLedger(
        fleet.path('notes.jsonl'),
        (rows) => rows.filter((row) => row.text === 'fenced write' && row.phase === 'start').length > 1,
        30_000,
      ),
    ]);
    const starts = readLedger(fleet.path('notes.jsonl')).filter(
      (row) => row.text === 'fenced write' && row.phase === 'start',
    );
    expect(starts).toHaveLength(1);
    expect(starts[0]?.pid).toBe(await serverPid('taker-b', 'notes'));
    expect(await publishedOutcomes('notes', 'write')).toBe(1);
  });

  it('on a concurrency-1 server: no overlap from a woken worker; a frozen worker’s own call is told apart', async () => {
    // 1. A worker frozen before the send must not start a call next to the new owner's.
    const stale = await fleet.startWorker({ id: 'frozen-c', servers: ['recorder'] });
    const staleServer = await wedgeSession(stale, 'frozen-c', 'recorder');
    const first = dispatcher.dispatch({
      jobId: 'stall',
      toolCallId: 'stale',
      server: 'recorder',
      tool: 'record',
      arguments: { ms: 3_000, label: 'stale' },
    });
    await stale.waitFor(
      (log) => log.msg === 'tool call picked up' && about('stale')(log),
      'frozen-c to take it',
    );
    pause(stale.pid);
    const taker = await fleet.startWorker({ id: 'taker-d', servers: ['recorder'] });
    await taker.waitFor((log) => log.msg === 'tool call sent' && about('stale')(log), 'taker-d to send it');
    resume(staleServer);
    resume(stale.pid);
    await Promise.any([
      stale.waitFor(
        (log) =>
          log.msg === 'lock lost before the send: call not sent, no outcome recorded' && about('stale')(log),
        'frozen-c to give the call up',
      ),
      waitForLedger(
        fleet.path('recorder.jsonl'),
        (rows) => rows.filter((row) => row.label === 'stale').length > 1,
        30_000,
      ),
    ]);
    expect(await first).toMatchObject({ status: 'ok', workerId: 'taker-d' });
    expect(
      recordedIntervals(fleet.path('recorder.jsonl')).filter((row) => row.label === 'stale'),
    ).toHaveLength(1);

    // 2. A worker frozen mid-call: its call keeps running on its server while the new owner re-runs
    // the (idempotent) call. That overlap is the frozen worker's own call, not a broken limit.
    await taker.stop();
    const second = dispatcher.dispatch({
      jobId: 'stall',
      toolCallId: 'own',
      server: 'recorder',
      tool: 'record',
      arguments: { ms: 9_000, label: 'own' },
    });
    await stale.waitFor((log) => log.msg === 'tool call sent' && about('own')(log), 'frozen-c to send it');
    // Freeze first: starting a worker takes seconds on a busy machine, time enough for the call to end.
    pause(stale.pid);
    await fleet.startWorker({ id: 'taker-e', servers: ['recorder'] });
    expect(await second).toMatchObject({ status: 'ok', workerId: 'taker-e' });
    // A frozen process sends nothing: whatever its server started before the wake-up was sent before
    // the freeze, i.e. the frozen worker's own call.
    const resumedAt = Date.now();
    resume(stale.pid);
    await stale.waitFor(
      (log) => log.msg === 'job no longer ours: no outcome recorded' && about('own')(log),
      'frozen-c to drop its stale result',
    );
    expect(await publishedOutcomes('recorder', 'own')).toBe(1);

    const intervals = recordedIntervals(fleet.path('recorder.jsonl'));
    const byFrozenWorker = (interval: Interval) =>
      (interval as unknown as { pid: number }).pid === staleServer && interval.start < resumedAt;
    const found = overlaps(intervals);
    const frozenOwn = found.filter(([earlier, later]) => byFrozenWorker(earlier) || byFrozenWorker(later));
    const real = found.filter((pair) => !frozenOwn.includes(pair));
    console.info(
      `recorder overlaps: ${found.length} total, ${frozenOwn.length} the frozen worker's own call`,
    );
    expect(real).toEqual([]);
    expect(intervals.filter((row) => row.label === 'own').length).toBeGreaterThanOrEqual(1);
  });
});
