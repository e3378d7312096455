import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json, SseEvent } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/** A key that only decides approvals of team beta (teams.beta.approverKeys). */
const BETA_APPROVER = 'beta-approver-0000000000005';
/** Long enough for a loaded machine to answer, short enough for the expiry test to wait it out. */
const APPROVAL_TTL_MS = 20_000;

const agent = (script: unknown[]) => ({
  kind: 'agent',
  input: 'Do the banking.',
  model: { provider: 'scripted', script },
});

/**
 * People in the loop (issue 11; docs/semantics.md §14–15), against the teller example server over stdio
 * (MCP 2025-11-25: the server sends elicitation/create mid-call): a question parks the run
 * (`input_required`), the answer resumes it on any replica and the answered call is retried as a new,
 * linked call; a destructive call waits for an approval bound to its arguments' digest.
 */
describe('questions from tools and approvals', () => {
  let deployment: Deployment;
  let replicas: Orchestrator[];
  const ledger = () => readLedger(deployment.path('teller.jsonl'));

  beforeAll(async () => {
    deployment = new Deployment(
      'people',
      (dir) => ({
        teller: exampleServer('teller', {
          env: { TELLER_LEDGER: `${dir}/teller.jsonl` },
          trusted: true,
          // close_account is destructive by its (trusted) annotations: `auto` makes it need approval.
          approval: { default: 'never', tools: { close_account: 'auto' } },
        }),
        // The same question on MCP 2026-07-28: an input_required result instead of elicitation/create.
        bank: exampleServer('teller-modern', { env: { TELLER_LEDGER: `${dir}/bank.jsonl` } }),
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 50 },
          beta: { apiKeys: [TEAM_KEYS.beta], approverKeys: [BETA_APPROVER] },
        },
        orchestrator: { approvalTtlMs: APPROVAL_TTL_MS },
      },
    );
    await deployment.startWorker({ id: 'w-people' });
    // Three replicas: two tests SIGKILL the one holding their run, and one must still be there.
    replicas = await Promise.all(
      ['o-one', 'o-two', 'o-three'].map((name) => deployment.startOrchestrator(name)),
    );
  }, 180_000);

  afterAll(async () => {
    await deployment?.close();
  });

  const crashed = new Set<Orchestrator>();
  const alive = () => replicas.filter((replica) => !crashed.has(replica));
  const api = (team: 'alpha' | 'beta' = 'alpha'): ApiClient => {
    const replica = alive()[0];
    if (!replica) throw new Error('no replica alive');
    return replica.api(team);
  };

  async function submit(body: unknown, team: 'alpha' | 'beta' = 'alpha'): Promise<string> {
    const submitted = await api(team).submit(body);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    return submitted.body.id;
  }

  /** Waits on the job's event stream for the call to wait for a person; returns that event. */
  async function waitingOn(id: string, kind: 'question' | 'approval', team: 'alpha' | 'beta' = 'alpha') {
    const events = await api(team).events(
      id,
      (event) => event.event === 'status' && event.data.status === 'input_required',
    );
    const asked = events.filter((event) => event.event === 'input_required' && event.data.kind === kind);
    expect(asked.length, JSON.stringify(events.map((event) => event.event))).toBeGreaterThan(0);
    return { asked: asked.at(-1) as SseEvent, events };
  }

  /** SIGKILLs the replica whose `running` event is the last in `events`: the one that parked the run. */
  async function crashRunner(events: SseEvent[]): Promise<void> {
    const runner = events.findLast((event) => event.event === 'status' && event.data.status === 'running');
    const doomed = replicas.find(
      (replica) => replica.process.name === `orchestrator ${runner?.data.replica}`,
    );
    if (!doomed) throw new Error(`no replica named ${runner?.data.replica}`);
    crashed.add(doomed);
    await doomed.process.crash();
  }

  it('a form question parks the run; the answer resumes it on another replica after a SIGKILL; the write happens once', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'pay', tool: 'teller__transfer', arguments: { to: 'ACME', amount: 120 } }] },
        { final: 'Paid.' },
      ]),
    );
    const { asked, events } = await waitingOn(id, 'question');
    expect(asked.data).toMatchObject({
      toolCallId: 'pay',
      server: 'teller',
      tool: 'transfer',
      question: {
        mode: 'form',
        message: 'Confirm the transfer of 120 to ACME',
        requestedSchema: { required: ['confirm'] },
      },
    });
    const parked: Json = await api().job(id);
    expect(parked.status).toBe('input_required');
    expect(parked.pendingInputs).toEqual([
      expect.objectContaining({
        kind: 'question',
        toolCallId: 'pay',
        server: 'teller',
        tool: 'transfer',
        state: 'pending',
      }),
    ]);
    // The tool ran up to its question (asked), was answered `cancel`, and moved no money.
    expect(
      ledger()
        .filter((row) => row.tool === 'transfer')
        .map((row) => row.phase),
    ).toEqual(['asked', 'cancel']);

    // The replica that ran it dies while the job waits: nothing of the wait lived in its memory.
    await crashRunner(events);

    // Bad input first: an answer that does not match the requested schema names the field.
    const wrongType = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'pay',
      action: 'accept',
      content: { confirm: 'yes' },
    });
    expect(wrongType.status).toBe(400);
    expect(JSON.stringify(wrongType.body)).toContain('content.confirm');
    const missing = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'pay',
      action: 'accept',
      content: {},
    });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('confirm');
    // A body that is not an answer names what is wrong.
    const noCall = await api().request('POST', `/v1/jobs/${id}/input`, { action: 'accept', content: {} });
    expect(noCall.status).toBe(400);
    expect(JSON.stringify(noCall.body)).toContain('toolCallId');
    // Another team's job does not exist for it.
    const foreign = await api('beta').request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'pay',
      action: 'decline',
    });
    expect(foreign.status).toBe(404);

    const answered = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'pay',
      action: 'accept',
      content: { confirm: true, memo: 'invoice 7' },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const twice = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'pay',
      action: 'accept',
      content: { confirm: true },
    });
    expect(twice.status).toBe(409);

    const job: Json = await api().finished(id);
    expect(job).toMatchObject({ status: 'succeeded', result: 'Paid.' });
    const call = job.toolCalls.find((entry: Json) => entry.id === 'pay');
    // The answered retry is a new, linked call of its own.
    expect(call.outcome).toMatchObject({ status: 'ok', executed: 'yes', toolCallId: 'pay~input-1' });
    expect(call.outcome.text).toContain('Transferred 120 to ACME');
    expect(job.pendingInputs).toEqual([]);
    expect(job.audit).toEqual([
      expect.objectContaining({
        kind: 'question',
        toolCallId: 'pay',
        state: 'answered',
        answer: { action: 'accept', content: { confirm: true, memo: 'invoice 7' } },
        decidedBy: expect.stringMatching(/^alpha\/apiKeys\[0\] \(sha256:[0-9a-f]{12}\)$/),
      }),
    ]);
    expect(JSON.stringify(job.audit)).not.toContain(TEAM_KEYS.alpha);
    // The money moved exactly once, with the answer's memo.
    const done = ledger().filter((row) => row.tool === 'transfer' && row.phase === 'done');
    expect(done).toEqual([expect.objectContaining({ to: 'ACME', amount: 120, memo: 'invoice 7' })]);
  }, 240_000);

  it('on MCP 2026-07-28 an input_required result parks the run the same way; the answered retry moves the money once', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'wire', tool: 'bank__transfer', arguments: { to: 'Globex', amount: 9 } }] },
        { final: 'Wired.' },
      ]),
    );
    const { asked } = await waitingOn(id, 'question');
    expect(asked.data).toMatchObject({
      toolCallId: 'wire',
      server: 'bank',
      question: {
        mode: 'form',
        message: 'Confirm the transfer of 9 to Globex',
        requestedSchema: { type: 'object' },
      },
    });
    const answered = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'wire',
      action: 'accept',
      content: { confirm: true },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const job: Json = await api().finished(id);
    expect(job).toMatchObject({ status: 'succeeded', result: 'Wired.' });
    expect(job.toolCalls[0].outcome).toMatchObject({
      status: 'ok',
      executed: 'yes',
      toolCallId: 'wire~input-1',
    });
    const rows = readLedger(deployment.path('bank.jsonl')).filter((row) => row.to === 'Globex');
    // Asked, told `cancel` while nobody could answer; asked again on the retry and answered: done once.
    expect(rows.map((row) => row.phase)).toEqual(['asked', 'cancel', 'asked', 'done']);
  }, 180_000);

  it('a declined question reaches the model as the server reported it', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'gift', tool: 'teller__transfer', arguments: { to: 'Nephew', amount: 5 } }] },
        { final: 'Understood.' },
      ]),
    );
    await waitingOn(id, 'question');
    const declined = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'gift',
      action: 'decline',
    });
    expect(declined.status, JSON.stringify(declined.body)).toBe(200);
    const job: Json = await api().finished(id);
    expect(job.status).toBe('succeeded');
    const tool = job.messages.find((message: Json) => message.role === 'tool');
    expect(JSON.stringify(tool)).toContain('the person chose decline');
    expect(
      ledger()
        .filter((row) => row.to === 'Nephew')
        .map((row) => row.phase),
    ).toEqual(['asked', 'cancel', 'asked', 'decline']);
  }, 180_000);

  it('a URL question is answered without content', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'link', tool: 'teller__link_account', arguments: { bank: 'Northwind' } }] },
        { final: 'Linked.' },
      ]),
    );
    const { asked } = await waitingOn(id, 'question');
    expect(asked.data.question).toMatchObject({
      mode: 'url',
      url: 'https://example.com/link/Northwind',
      elicitationId: 'link-Northwind',
    });
    const withContent = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'link',
      action: 'accept',
      content: { x: 1 },
    });
    expect(withContent.status).toBe(400);
    expect(
      (await api().request('POST', `/v1/jobs/${id}/input`, { toolCallId: 'link', action: 'accept' })).status,
    ).toBe(200);
    const job: Json = await api().finished(id);
    expect(job.status).toBe('succeeded');
    expect(ledger().filter((row) => row.bank === 'Northwind' && row.phase === 'done')).toHaveLength(1);
  }, 180_000);

  it('an approved destructive call runs once, only after an approval that outlives a SIGKILLed replica, bound to its digest', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'A-1' } }] },
        { final: 'Closed.' },
      ]),
    );
    const { asked, events } = await waitingOn(id, 'approval');
    await crashRunner(events);
    expect(asked.data).toMatchObject({
      toolCallId: 'close',
      tool: 'close_account',
      arguments: { account: 'A-1' },
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    // Nothing reached the server before the approval.
    expect(ledger().filter((row) => row.account === 'A-1')).toEqual([]);
    const digest = String(asked.data.digest);

    // Approving other arguments (a digest that is not this call's) is refused; the request stays open.
    const other = await api().request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'approve',
      digest: `sha256:${'0'.repeat(64)}`,
    });
    expect(other.status).toBe(422);
    expect(JSON.stringify(other.body)).toContain('digest');
    const malformed = await api().request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'approve',
      digest: 'abc',
    });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toContain('digest');
    // A call that waits for nothing.
    const none = await api().request('POST', `/v1/jobs/${id}/approvals/nope`, {
      decision: 'approve',
      digest,
    });
    expect(none.status).toBe(409);
    // Another team's approver does not see this job.
    const foreign = api('beta').withKey(BETA_APPROVER);
    expect(
      (await foreign.request('POST', `/v1/jobs/${id}/approvals/close`, { decision: 'approve', digest }))
        .status,
    ).toBe(404);

    const approved = await api().request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'approve',
      digest,
      reason: 'ticket 42',
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(
      (await api().request('POST', `/v1/jobs/${id}/approvals/close`, { decision: 'approve', digest })).status,
    ).toBe(409);

    const job: Json = await api().finished(id);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(ledger().filter((row) => row.account === 'A-1')).toHaveLength(1);
    expect(job.audit).toEqual([
      expect.objectContaining({
        kind: 'approval',
        toolCallId: 'close',
        digest,
        answer: { decision: 'approve', digest, reason: 'ticket 42' },
        decidedBy: expect.stringContaining('alpha/apiKeys[0]'),
      }),
    ]);
  }, 180_000);

  it("a denial ends the call `denied` (executed no) and the model is told; only the team's approver key decides", async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'B-2' } }] },
        { final: 'Not closed.' },
      ]),
      'beta',
    );
    const { asked } = await waitingOn(id, 'approval', 'beta');
    const digest = String(asked.data.digest);
    // beta has approverKeys: its API key may not decide.
    expect(
      (await api('beta').request('POST', `/v1/jobs/${id}/approvals/close`, { decision: 'approve', digest }))
        .status,
    ).toBe(401);
    const approver = api('beta').withKey(BETA_APPROVER);
    const denied = await approver.request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'deny',
      digest,
      reason: 'not today',
    });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    const job: Json = await api('beta').finished(id);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome).toMatchObject({ status: 'denied', executed: 'no', attempts: 0 });
    const tool = job.messages.find((message: Json) => message.role === 'tool');
    expect(JSON.stringify(tool)).toContain('denied this call');
    expect(JSON.stringify(tool)).toContain('not today');
    expect(job.audit[0].decidedBy).toContain('beta/approverKeys[0]');
    expect(ledger().filter((row) => row.account === 'B-2')).toEqual([]);
  }, 180_000);

  it('an approval nobody gives expires: the call ends `expired`, never sent; a late approval is refused', async () => {
    const id = await submit(
      agent([
        { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'C-3' } }] },
        { final: 'Gave up.' },
      ]),
    );
    const { asked } = await waitingOn(id, 'approval');
    // The parked run wakes at the expiry by itself (its delayed run), on whichever replica.
    const job: Json = await api().finished(id, APPROVAL_TTL_MS + 120_000);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome).toMatchObject({
      status: 'expired',
      executed: 'no',
      error: 'approval_expired',
    });
    const late = await api().request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'approve',
      digest: asked.data.digest,
    });
    expect(late.status).toBe(409);
    expect(ledger().filter((row) => row.account === 'C-3')).toEqual([]);
  }, 240_000);

  it('an unanswered question expires with the job: the parked run wakes at the deadline and fails the job', async () => {
    const id = await submit({
      ...agent([
        { toolCalls: [{ id: 'late', tool: 'teller__transfer', arguments: { to: 'Nobody', amount: 3 } }] },
        { final: 'Never.' },
      ]),
      limits: { deadlineMs: 8_000 },
    });
    await waitingOn(id, 'question');
    const job: Json = await api().finished(id);
    expect(job.status).toBe('failed');
    expect(job.error).toContain('deadline');
    expect(job.pendingInputs).toEqual([]);
    expect(job.audit).toEqual([
      expect.objectContaining({ kind: 'question', toolCallId: 'late', state: 'expired' }),
    ]);
    const late = await api().request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: 'late',
      action: 'decline',
    });
    expect(late.status).toBe(409);
    expect(ledger().filter((row) => row.to === 'Nobody' && row.phase === 'done')).toEqual([]);
  }, 180_000);

  it('a batch job cannot wait: a question ends the call `input_required`, an approval-gated call is not sent', async () => {
    const id = await submit({
      kind: 'batch',
      calls: [
        { tool: 'teller__transfer', arguments: { to: 'Batch', amount: 1 } },
        { tool: 'teller__close_account', arguments: { account: 'D-4' } },
      ],
    });
    const job: Json = await api().finished(id);
    // Not every call ended ok: the batch completes with errors (docs/semantics.md §17).
    expect(job.status).toBe('completed_with_errors');
    const [transfer, close] = job.toolCalls;
    expect(transfer.outcome).toMatchObject({
      status: 'input_required',
      executed: 'yes',
      question: { mode: 'form', message: 'Confirm the transfer of 1 to Batch' },
    });
    expect(close.outcome).toMatchObject({ status: 'denied', executed: 'no', error: 'approval_unavailable' });
    expect(
      ledger().filter((row) => row.account === 'D-4' || (row.to === 'Batch' && row.phase === 'done')),
    ).toEqual([]);
  }, 180_000);
});
