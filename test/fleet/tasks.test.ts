import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { EVERYTHING_SERVER, exampleServerPath, tsxArgs } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import type { TestProcess } from '../support/processes.ts';
import { type RecordedRequest, RecordingProxy } from '../support/recording-proxy.ts';
import { waitForStderr } from '../support/stderr.ts';
import { killWhileTaskRuns, taskCreated } from '../support/task-handover.ts';

const RESEARCH = 'simulate-research-query';
const REPORT = 'compile-report';
/** A kill test starts a worker (tens of seconds on a loaded machine) and waits out a lock: this only bounds a failure. */
const KILL_TEST = { timeout: 240_000 };

/**
 * Issue 10, "Tasks, durably": server-everything's `simulate-research-query` declares
 * `execution.taskSupport: "required"` and runs 4 stages of 1 s as a 2025-11-25 task. The worker runs it
 * as a task, records the task handle in the job before polling, follows it after its worker is killed,
 * and turns a cancel or the task's time limit into `tasks/cancel`. The HTTP server sits behind a
 * recording proxy: server-everything logs no task creation, so the proxy's record of the requests the
 * server received is the evidence of how often a task was started. The example `reports` server
 * (examples/mcp-servers/src/reports.ts) runs longer tasks and logs each task it starts and each
 * `tasks/cancel` that reaches it in its own ledger.
 */
describe('MCP tasks through the fleet', () => {
  let fleet: Fleet;
  let proxy: RecordingProxy;
  /** The one worker running when a call is dispatched (the crash tests replace it). */
  let worker: TestProcess;
  let dispatcher: ToolCallDispatcher;
  let workers = 0;
  const ledger = () => fleet.path('reports.jsonl');

  beforeAll(async () => {
    const [port, reportsPort] = await Promise.all([freePort(), freePort()]);
    proxy = await RecordingProxy.start(`http://127.0.0.1:${port}`);
    fleet = new Fleet('tasks', (dir) => ({
      reports: { transport: 'http', url: `http://127.0.0.1:${reportsPort}/mcp`, retry: { attempts: 1 } },
      'reports-stdio': exampleServer('reports', {
        env: { REPORTS_LEDGER: `${dir}/reports.jsonl` },
        retry: { attempts: 1 },
      }),
      research: { transport: 'http', url: proxy.url('/mcp'), timeoutMs: 5_000, retry: { attempts: 1 } },
      'research-capped': {
        transport: 'http',
        url: proxy.url('/mcp'),
        timeoutMs: 5_000,
        retry: { attempts: 1 },
        tasks: { maxDurationMs: 1_500 },
      },
      'research-off': {
        transport: 'http',
        url: proxy.url('/mcp'),
        timeoutMs: 5_000,
        tasks: { mode: 'never' },
      },
      'research-stdio': {
        transport: 'stdio',
        command: process.execPath,
        args: [EVERYTHING_SERVER, 'stdio'],
        timeoutMs: 5_000,
        retry: { attempts: 1 },
      },
    }));
    const everything = fleet.group.start('everything http', [EVERYTHING_SERVER, 'streamableHttp'], {
      PORT: String(port),
    });
    const reports = fleet.group.start(
      'reports http',
      tsxArgs(exampleServerPath('reports'), '--http', String(reportsPort)),
      { REPORTS_LEDGER: ledger() },
    );
    await Promise.all([
      waitForStderr(everything, `port ${port}`),
      reports.waitFor((log) => typeof log.listening === 'string', 'reports listening'),
    ]);
    worker = await startWorker();
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
    await proxy?.close();
  });

  const startWorker = () => fleet.startWorker({ id: `w-${++workers}` });
  const research = (server: string, topic: string, jobId = 'tasks') =>
    dispatcher.dispatch({ jobId, toolCallId: topic, server, tool: RESEARCH, arguments: { topic } });
  const report = (server: string, topic: string, ms: number, jobId = 'tasks') =>
    dispatcher.dispatch({ jobId, toolCallId: topic, server, tool: REPORT, arguments: { topic, ms } });
  /** The reports server's own record of `topic`'s tasks. */
  const reportRows = (phase: string, topic: string) =>
    readLedger(ledger()).filter((row) => row.phase === phase && row.topic === topic);
  /** The task-augmented tools/call requests the server received for `topic`. */
  const taskCreations = (topic: string) =>
    proxy.requests.filter(
      (request) =>
        request.method === 'tools/call' &&
        request.params.name === RESEARCH &&
        (request.params.arguments as { topic?: string } | undefined)?.topic === topic,
    );

  it('runs a task-required tool as a task and returns its real result (http and stdio)', async () => {
    const [overHttp, overStdio] = await Promise.all([
      research('research', 'tides'),
      research('research-stdio', 'comets'),
    ]);
    expect(overHttp).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(overHttp.text).toContain('# Research Report: tides');
    expect(overStdio).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(overStdio.text).toContain('# Research Report: comets');

    const [creation] = taskCreations('tides');
    expect(taskCreations('tides')).toHaveLength(1);
    expect(creation?.params.task).toMatchObject({ ttl: expect.any(Number) });
    const { task_id: taskId } = await taskCreated(worker, 'tides');
    const polls = proxy.requests.filter((r) => r.method === 'tasks/get' && r.params.taskId === taskId);
    expect(polls.length).toBeGreaterThanOrEqual(1);
    expect(
      proxy.requests.filter((r) => r.method === 'tasks/result' && r.params.taskId === taskId),
    ).toHaveLength(1);
    // The task's stages reached the call's progress events.
    const statuses = worker.logs.filter((log) => log.msg === 'task status' && log.tool_call_id === 'tides');
    expect(statuses.map((log) => log.statusMessage)).toContain('Gathering sources...');
  });

  it('refuses a task-required tool before sending when tasks are disabled: executed no', async () => {
    const outcome = await research('research-off', 'refused');
    expect(outcome).toMatchObject({ status: 'failed', executed: 'no', attempts: 0, error: 'task_required' });
    expect(outcome.text).toContain('tasks.mode: never');
    expect(taskCreations('refused')).toHaveLength(0);
  });

  it('cancels a task that outlives tasks.maxDurationMs with tasks/cancel', async () => {
    const outcome = await research('research-capped', 'capped');
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
    expect(outcome.text).toContain('1500 ms (tasks.maxDurationMs)');
    const { task_id: taskId } = await taskCreated(worker, 'capped');
    await proxy.waitFor((r) => r.method === 'tasks/cancel' && r.params.taskId === taskId, 'tasks/cancel');
  });

  it('turns a cancel of the job into tasks/cancel', async () => {
    const pending = research('research', 'cancelled', 'cancel-task');
    const { task_id: taskId } = await taskCreated(worker, 'cancelled');
    await dispatcher.cancel('cancel-task');
    expect(await pending).toMatchObject({ status: 'cancelled', executed: 'unknown', attempts: 1 });
    await proxy.waitFor((r) => r.method === 'tasks/cancel' && r.params.taskId === taskId, 'tasks/cancel');
    expect(taskCreations('cancelled')).toHaveLength(1);
  });

  /** Kills the worker that created `topic`'s task (see task-handover.ts); its survivor is the worker from then on. */
  async function killMidTask(topic: string, call: () => ReturnType<ToolCallDispatcher['dispatch']>) {
    const handedOver = await killWhileTaskRuns(fleet, [worker, await startWorker()], topic, call);
    worker = handedOver.survivor;
    return handedOver;
  }

  it(
    'a worker killed while its task runs is replaced; the next one follows the same task',
    KILL_TEST,
    async () => {
      const { outcome, taskId } = await killMidTask('durable', () => research('research', 'durable'));
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      expect(outcome.text).toContain('# Research Report: durable');
      // Started once: the server received one task-augmented tools/call for this topic, and the
      // replacement fetched that task's result on the session it was created on.
      const creations = taskCreations('durable');
      expect(creations).toHaveLength(1);
      const results = proxy.requests.filter(
        (r: RecordedRequest) => r.method === 'tasks/result' && r.params.taskId === taskId,
      );
      expect(results).toHaveLength(1);
      expect(results[0]?.sessionId).toBe(creations[0]?.sessionId);
    },
  );

  it(
    "the server's own ledger shows a resumed task was started once and finished once",
    KILL_TEST,
    async () => {
      const { outcome, taskId } = await killMidTask('ledgered', () => report('reports', 'ledgered', 6_000));
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes' });
      expect(outcome.text).toContain('Report on ledgered, compiled in 6000 ms.');
      expect(reportRows('created', 'ledgered').map((row) => row.taskId)).toEqual([taskId]);
      expect(reportRows('done', 'ledgered')).toHaveLength(1);
      expect(reportRows('cancelled', 'ledgered')).toHaveLength(0);
    },
  );

  it(
    "a task that died with its worker's stdio server ends indeterminate, never started again",
    KILL_TEST,
    async () => {
      const { outcome, taskId } = await killMidTask('orphaned', () =>
        report('reports-stdio', 'orphaned', 6_000),
      );
      expect(outcome).toMatchObject({ status: 'indeterminate', executed: 'unknown' });
      expect(outcome.error).toContain(taskId);
      expect(reportRows('created', 'orphaned').map((row) => row.taskId)).toEqual([taskId]);
    },
  );

  it('a cancel reaches a stdio server as tasks/cancel and stops its task', async () => {
    const pending = report('reports-stdio', 'stopped', 60_000, 'cancel-report');
    const { task_id: taskId } = await taskCreated(worker, 'stopped');
    await dispatcher.cancel('cancel-report');
    expect(await pending).toMatchObject({ status: 'cancelled', executed: 'unknown', attempts: 1 });
    const rows = await waitForLedger(ledger(), (all) =>
      all.some((row) => row.phase === 'cancelled' && row.topic === 'stopped'),
    );
    expect(rows.filter((row) => row.topic === 'stopped').map((row) => [row.phase, row.taskId])).toEqual([
      ['created', taskId],
      ['cancelled', taskId],
    ]);
  });
});
