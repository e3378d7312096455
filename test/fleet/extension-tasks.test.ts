import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import { exampleServerPath, tsxArgs } from '../support/paths.ts';
import { freePort } from '../support/ports.ts';
import type { TestProcess } from '../support/processes.ts';
import { killWhileTaskRuns, taskCreated } from '../support/task-handover.ts';

/** A kill test starts a worker (tens of seconds on a loaded machine) and waits out a lock: this only bounds a failure. */
const KILL_TEST = { timeout: 240_000 };

/**
 * Issue 10, "Tasks, durably", on MCP 2026-07-28: tasks are the extension `io.modelcontextprotocol/tasks`
 * (examples/mcp-servers/src/research-modern.ts, a 2026-07-28-only server whose `research` tool runs only
 * as a task and refuses a call that does not declare the extension). The worker runs it through
 * `@modelcontextprotocol/ext-tasks`, records the task reference in the job before it follows the task,
 * and a worker killed mid-task is replaced by one that resumes the same task. The server's ledger
 * records each task created, finished and cancelled, and each refusal.
 */
describe('MCP tasks on 2026-07-28 (io.modelcontextprotocol/tasks)', () => {
  let fleet: Fleet;
  let worker: TestProcess;
  let dispatcher: ToolCallDispatcher;
  let workers = 0;
  const ledger = () => fleet.path('research.jsonl');

  beforeAll(async () => {
    const port = await freePort();
    const http = { transport: 'http' as const, url: `http://127.0.0.1:${port}/mcp`, retry: { attempts: 1 } };
    fleet = new Fleet('ext-tasks', (dir) => ({
      'research-http': http,
      'research-capped': { ...http, tasks: { maxDurationMs: 1_500 } },
      'research-off': { ...http, tasks: { mode: 'never' } },
      'research-prefer': { ...http, tasks: { mode: 'prefer' } },
      'research-stdio': exampleServer('research-modern', {
        env: { RESEARCH_LEDGER: `${dir}/research.jsonl` },
        retry: { attempts: 1 },
      }),
    }));
    const server = fleet.group.start(
      'research http',
      tsxArgs(exampleServerPath('research-modern'), '--http', String(port)),
      { RESEARCH_LEDGER: ledger() },
    );
    await server.waitFor((_log, raw) => raw.includes('"listening"'), 'the research server to listen');
    worker = await startWorker();
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const startWorker = () =>
    fleet.startWorker({
      id: `w-${++workers}`,
      waitFor: ['research-http', 'research-capped', 'research-off', 'research-prefer', 'research-stdio'],
    });
  const research = (server: string, topic: string, ms: number, jobId = 'ext-tasks') =>
    dispatcher.dispatch({ jobId, toolCallId: topic, server, tool: 'research', arguments: { topic, ms } });
  /** The server's own record of `topic`. */
  const rows = (phase: string, topic: string) =>
    readLedger(ledger()).filter((row) => row.phase === phase && row.topic === topic);

  it('negotiates 2026-07-28 and runs a refused call as a task with its real result (http and stdio)', async () => {
    const [overHttp, overStdio] = await Promise.all([
      research('research-http', 'tides', 800),
      research('research-stdio', 'comets', 800),
    ]);
    expect(overHttp).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(overHttp.text).toBe('researched tides in 4 steps');
    expect(overHttp.structuredContent).toEqual({ topic: 'tides', steps: 4 });
    expect(overStdio).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1 });
    expect(overStdio.text).toBe('researched comets in 4 steps');
    // The plain call was refused unrun, then one task was created and finished.
    for (const topic of ['tides', 'comets']) {
      expect(rows('refused', topic)).toHaveLength(1);
      expect(rows('created', topic)).toHaveLength(1);
      expect(rows('done', topic)).toHaveLength(1);
    }
    const ready = worker.logs.find(
      (log) => log.msg === 'session state' && log.server === 'research-http' && log.state === 'ready',
    );
    expect(ready?.protocolVersion).toBe('2026-07-28');
    // The task's steps reached the call's progress events: polled, so which steps were seen depends on
    // timing, but they come in order and at least one came after the task was created.
    const statuses = worker.logs.filter((log) => log.msg === 'task status' && log.tool_call_id === 'tides');
    const steps = statuses.map((log) => Number(/^step (\d) of 4$/.exec(String(log.statusMessage))?.[1]));
    expect(steps.every((step) => Number.isInteger(step))).toBe(true);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(Math.max(...steps)).toBeGreaterThanOrEqual(1);
  });

  it('with tasks disabled the refusal stands: failed, executed no, and no task was created', async () => {
    const outcome = await research('research-off', 'refused', 100);
    expect(outcome).toMatchObject({ status: 'failed', executed: 'no', attempts: 1 });
    expect(outcome.text).toContain('refused the call to research before running it');
    expect(outcome.text).toContain('io.modelcontextprotocol/tasks');
    expect(rows('refused', 'refused')).toHaveLength(1);
    expect(rows('created', 'refused')).toHaveLength(0);
  });

  it('with tasks.mode prefer every call declares the extension: the task is created without a refusal first', async () => {
    const outcome = await research('research-prefer', 'preferred', 400);
    expect(outcome).toMatchObject({
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      text: 'researched preferred in 4 steps',
    });
    expect(rows('refused', 'preferred')).toHaveLength(0);
    expect(rows('created', 'preferred')).toHaveLength(1);
  });

  it('a cancel of the job reaches the server as tasks/cancel', async () => {
    const pending = research('research-http', 'stopped', 60_000, 'cancel-ext-task');
    const { task_id: taskId } = await taskCreated(worker, 'stopped');
    await dispatcher.cancel('cancel-ext-task');
    expect(await pending).toMatchObject({ status: 'cancelled', executed: 'unknown', attempts: 1 });
    const all = await waitForLedger(ledger(), (lines) =>
      lines.some((row) => row.phase === 'cancelled' && row.taskId === taskId),
    );
    expect(all.filter((row) => row.taskId === taskId).map((row) => row.phase)).toEqual([
      'created',
      'cancelled',
    ]);
  });

  it('a task that outlives tasks.maxDurationMs is cancelled with tasks/cancel and ends timeout', async () => {
    const outcome = await research('research-capped', 'capped', 60_000);
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', attempts: 1 });
    expect(outcome.text).toContain('1500 ms (tasks.maxDurationMs)');
    const all = await waitForLedger(ledger(), (lines) => {
      const created = lines.find((row) => row.phase === 'created' && row.topic === 'capped');
      return lines.some((row) => row.phase === 'cancelled' && row.taskId === created?.taskId);
    });
    const [created] = rows('created', 'capped');
    expect(all.filter((row) => row.taskId === created?.taskId).map((row) => row.phase)).toEqual([
      'created',
      'cancelled',
    ]);
  });

  it(
    'a worker killed while its task runs is replaced; the next one resumes the same task, created once',
    KILL_TEST,
    async () => {
      const { outcome, taskId, survivor } = await killWhileTaskRuns(
        fleet,
        [worker, await startWorker()],
        'durable',
        () => research('research-http', 'durable', 8_000),
      );
      worker = survivor;
      expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', text: 'researched durable in 4 steps' });
      expect(rows('created', 'durable').map((row) => row.taskId)).toEqual([taskId]);
      expect(rows('done', 'durable')).toHaveLength(1);
      expect(rows('cancelled', 'durable')).toHaveLength(0);
    },
  );
});
