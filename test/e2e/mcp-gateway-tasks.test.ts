import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { type RawAnswer, rawModernRequester } from '../support/mcp-clients.ts';

/** A key that only decides approvals of team alpha (teams.alpha.approverKeys). */
const ALPHA_APPROVER = 'alpha-approver-000000000009';
const OUTCOME = 'io.switchyard/outcome';
const TASKS = 'io.modelcontextprotocol/tasks';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

type Team = 'alpha' | 'beta';

/**
 * Approvals on /mcp, 2026-07-28 with the tasks extension (issue 19, docs/semantics.md §16): a client
 * that declares `io.modelcontextprotocol/tasks` gets a task at once for a call its team's rule gates;
 * the task is the call's job — `tasks/get` follows it from `input_required` (naming the job, where an
 * approver decides) to `completed` with the result a blocking call gets, `tasks/cancel` cancels it like
 * `POST /v1/jobs/:id/cancel`, and another team's key learns nothing of it. Every answer is checked
 * against ext-tasks' own wire schemas; the notes server's ledger says what really ran.
 */
describe('tasks on /mcp (2026-07-28): a gated call the client polls', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const ledger = () => readLedger(deployment.path('notes.jsonl'));
  const writes = (text: string) => ledger().filter((row) => row.phase === 'done' && row.text === text);

  beforeAll(async () => {
    deployment = new Deployment(
      'mcp-tasks',
      (dir) => ({ notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }) }),
      {
        teams: {
          // Team alpha's writes need a person, and only its approver key decides them.
          alpha: {
            apiKeys: [TEAM_KEYS.alpha],
            approverKeys: [ALPHA_APPROVER],
            approval: { notes: { default: 'never', tools: { add_note: 'required' } } },
          },
          beta: { apiKeys: [TEAM_KEYS.beta] },
        },
      },
    );
    await deployment.startWorker({ id: 'w-mcp-tasks' });
    orchestrator = await deployment.startOrchestrator('o-mcp-tasks');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const mcp = (team: Team) => rawModernRequester(orchestrator.url, TEAM_KEYS[team]);
  const api = (team: Team): ApiClient => orchestrator.api(team);
  const approver = () => orchestrator.api().withKey(ALPHA_APPROVER);

  const ok = (answer: RawAnswer, what: string): Record<string, unknown> => {
    expect(answer.error, `${what}: ${JSON.stringify(answer.error)}`).toBeUndefined();
    return answer.result as Record<string, unknown>;
  };

  /** A task-augmented call of notes__add_note as team alpha: the CreateTaskResult, checked. */
  const createTask = async (text: string) => {
    const created = ok(
      await mcp('alpha')('tools/call', { name: 'notes__add_note', arguments: { text } }, { tasks: true }),
      'tools/call',
    );
    const parsed = CreateTaskResultV2Schema.safeParse(created);
    expect(parsed.success, `${JSON.stringify(created)} ${parsed.error?.message}`).toBe(true);
    expect(created).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(/^job_[0-9a-f-]{36}$/),
    });
    expect(['working', 'input_required']).toContain(created.status);
    return String(created.taskId);
  };

  /** tasks/get as `team`, checked against the extension's GetTaskResult schema. */
  const getTask = async (taskId: string, team: Team = 'alpha') => {
    const task = ok(await mcp(team)('tasks/get', { taskId }, { tasks: true }), 'tasks/get');
    const parsed = GetTaskResultV2Schema.safeParse(task);
    expect(parsed.success, `${JSON.stringify(task)} ${parsed.error?.message}`).toBe(true);
    return task as Json;
  };

  /** Polls tasks/get (the protocol's way to wait) until `done`, within a deadline. */
  const untilTask = async (taskId: string, done: (task: Json) => boolean, what: string) => {
    const until = Date.now() + 60_000;
    for (;;) {
      const task = await getTask(taskId);
      if (done(task)) return task;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(task)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  /** The task's job on /v1 once it waits for its approval: the call and the digest to decide. */
  const pendingApproval = async (jobId: string) => {
    const job: Json = await api('alpha').job(jobId);
    expect(job.status).toBe('input_required');
    const pending = job.pendingInputs.find((input: Json) => input.kind === 'approval');
    expect(pending, JSON.stringify(job.pendingInputs)).toBeDefined();
    return { callId: String(pending.toolCallId), digest: String(pending.digest) };
  };

  const decide = async (jobId: string, decision: 'approve' | 'deny') => {
    const { callId, digest } = await pendingApproval(jobId);
    const response = await approver().request('POST', `/v1/jobs/${jobId}/approvals/${callId}`, {
      decision,
      digest,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  };

  it('advertises the tasks extension on 2026-07-28 only', async () => {
    const discovered = ok(await mcp('alpha')('server/discover', {}), 'server/discover');
    expect((discovered.capabilities as Json)?.extensions?.[TASKS]).toEqual({});
    const legacy = await fetch(`${orchestrator.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEAM_KEYS.alpha}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'switchyard-test', version: '1.0.0' },
        },
      }),
    });
    const text = await legacy.text();
    const body = JSON.parse(text.includes('data:') ? (/^data:(.*)$/m.exec(text)?.[1] ?? '{}') : text);
    expect(body.result?.capabilities?.tools, text).toBeDefined();
    expect(body.result.capabilities.extensions?.[TASKS]).toBeUndefined();
    expect(body.result.capabilities.tasks).toBeUndefined();
  });

  it('answers a gated call with a task that waits for the approval, then completes with the result', async () => {
    const text = 'task-approved';
    const taskId = await createTask(text);
    const waiting = await untilTask(taskId, (task) => task.status === 'input_required', 'input_required');
    // It names the job and where a person decides; the client has nothing to answer itself.
    expect(waiting.statusMessage).toContain(`job ${taskId}`);
    expect(waiting.statusMessage).toContain(`/v1/jobs/${taskId}/approvals/call-1`);
    expect(waiting.inputRequests).toEqual({});
    expect(writes(text)).toEqual([]);

    await decide(taskId, 'approve');
    const done = await untilTask(taskId, (task) => TERMINAL.has(task.status), 'the end of the task');
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.isError ?? false).toBe(false);
    expect(done.result.resultType).toBe('complete');
    expect(done.result._meta[OUTCOME]).toMatchObject({ status: 'ok', executed: 'yes', jobId: taskId });
    expect(writes(text)).toHaveLength(1);
    // The task is the job: /v1 tells the same story.
    const job: Json = await api('alpha').job(taskId);
    expect(job).toMatchObject({ kind: 'mcp', status: 'succeeded' });
    expect(job.toolCalls[0].outcome).toMatchObject({ status: 'ok', executed: 'yes' });
  });

  it('completes a denied task with an isError result that says the tool did not run', async () => {
    const text = 'task-denied';
    const taskId = await createTask(text);
    await untilTask(taskId, (task) => task.status === 'input_required', 'input_required');
    await decide(taskId, 'deny');
    const done = await untilTask(taskId, (task) => TERMINAL.has(task.status), 'the end of the task');
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(done.result.content[0].text).toMatch(/^\[denied\] .*The tool did not run\.$/);
    expect(done.result._meta[OUTCOME]).toMatchObject({ status: 'denied', executed: 'no', jobId: taskId });
    expect(ledger().filter((row) => row.text === text)).toEqual([]);
  });

  it("answers another team's key for the task with an error and nothing of the job", async () => {
    const text = 'task-private';
    const taskId = await createTask(text);
    await untilTask(taskId, (task) => task.status === 'input_required', 'input_required');
    const unknown = `job_${crypto.randomUUID()}`;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const params = method === 'tasks/update' ? { inputResponses: {} } : {};
      const foreign = await mcp('beta')(method, { taskId, ...params }, { tasks: true });
      const missing = await mcp('beta')(method, { taskId: unknown, ...params }, { tasks: true });
      expect(foreign.result, method).toBeUndefined();
      expect(foreign.error).toMatchObject({ code: -32602 });
      expect(foreign.error?.message).toMatch(/team beta has no task/);
      // Indistinguishable from an id that exists nowhere, and nothing of alpha's call in it.
      expect(foreign.error?.message.replace(taskId, '<id>')).toBe(
        missing.error?.message.replace(unknown, '<id>'),
      );
      expect(JSON.stringify(foreign.error)).not.toMatch(/add_note|task-private|alpha|input_required/);
    }
    // Beta's cancel did nothing: the task still waits for alpha's approver.
    expect((await getTask(taskId)).status).toBe('input_required');
    ok(await mcp('alpha')('tasks/cancel', { taskId }, { tasks: true }), 'tasks/cancel');
  });

  it('cancels a waiting task with tasks/cancel, as /v1 cancels its job: nothing runs', async () => {
    const text = 'task-cancelled';
    const taskId = await createTask(text);
    await untilTask(taskId, (task) => task.status === 'input_required', 'input_required');
    const acknowledged = ok(await mcp('alpha')('tasks/cancel', { taskId }, { tasks: true }), 'tasks/cancel');
    expect(CancelTaskResultV2Schema.safeParse(acknowledged).success, JSON.stringify(acknowledged)).toBe(true);
    const done = await untilTask(taskId, (task) => TERMINAL.has(task.status), 'the end of the task');
    expect(done.status, JSON.stringify(done)).toBe('cancelled');
    const job: Json = await api('alpha').finished(taskId);
    expect(job.status).toBe('cancelled');
    expect(job.pendingInputs).toEqual([]);
    // The approval is moot: deciding it now is refused, and the write never happens.
    const { digest } = job.audit.find((input: Json) => input.kind === 'approval');
    const late = await approver().request('POST', `/v1/jobs/${taskId}/approvals/call-1`, {
      decision: 'approve',
      digest,
    });
    expect(late.status).toBe(409);
    expect(ledger().filter((row) => row.text === text)).toEqual([]);
  });

  it('refuses tasks/get from a request that does not declare the extension', async () => {
    const taskId = await createTask('task-undeclared');
    const answer = await mcp('alpha')('tasks/get', { taskId });
    expect(answer.error, JSON.stringify(answer)).toMatchObject({ code: -32021 });
    ok(await mcp('alpha')('tasks/cancel', { taskId }, { tasks: true }), 'tasks/cancel');
  });

  // The blocking path on both revisions, with its progress notifications, is doors-matrix.test.ts's.
  it('still holds a 2026-07-28 call that does not declare the extension until its result', async () => {
    const text = 'blocking-without-tasks';
    const result = ok(
      await mcp('beta')('tools/call', { name: 'notes__add_note', arguments: { text } }),
      'tools/call',
    );
    expect(result.resultType).toBe('complete');
    expect(result.taskId).toBeUndefined();
    expect((result._meta as Json)[OUTCOME]).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(writes(text)).toHaveLength(1);
  });
});
