import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { connectGateway, type RawAnswer, rawModernRequester } from '../support/mcp-clients.ts';

const OUTCOME = 'io.switchyard/outcome';
/** What a 2026-07-28 client that can answer form questions declares in its per-request capabilities. */
const ELICITATION = { elicitation: { form: {} } };

type Team = 'alpha' | 'beta';

/**
 * A tool's question on /mcp (docs/semantics.md §16): relayed to a 2026-07-28 client that declares
 * elicitation as an `input_required` result whose `requestState` names the call's job, answered by the
 * client's retry carrying `inputResponses` and recorded as a person's answer on /v1 is; parked for the
 * team's people when the client cannot answer. The teller's ledger says how often the tool asked and
 * whether the transfer was made.
 */
describe('questions on /mcp: relayed to the client, or parked for a person', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const ledger = () => readLedger(deployment.path('teller.jsonl'));
  const transfers = (to: string, phase: string) =>
    ledger().filter((row) => row.tool === 'transfer' && row.to === to && row.phase === phase);

  beforeAll(async () => {
    deployment = new Deployment('mcp-questions', (dir) => ({
      teller: exampleServer('teller', { env: { TELLER_LEDGER: `${dir}/teller.jsonl` } }),
    }));
    await deployment.startWorker({ id: 'w-mcp-questions' });
    orchestrator = await deployment.startOrchestrator('o-mcp-questions');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const mcp = (team: Team = 'alpha') => rawModernRequester(orchestrator.url, TEAM_KEYS[team]);
  const transfer = (to: string, extra: Record<string, unknown> = {}, team: Team = 'alpha') =>
    mcp(team)(
      'tools/call',
      { name: 'teller__transfer', arguments: { to, amount: 5 }, ...extra },
      { capabilities: ELICITATION },
    );
  const ok = (answer: RawAnswer, what: string): Record<string, unknown> => {
    expect(answer.error, `${what}: ${JSON.stringify(answer.error)}`).toBeUndefined();
    return answer.result as Record<string, unknown>;
  };

  /** The input_required result of a relayed question: its one input request and the job it names. */
  const asked = (result: Record<string, unknown>) => {
    expect(result.resultType, JSON.stringify(result)).toBe('input_required');
    const requests = result.inputRequests as Record<
      string,
      { method: string; params: Record<string, unknown> }
    >;
    expect(Object.keys(requests)).toEqual(['question']);
    const request = requests.question;
    if (!request) throw new Error(`no question in ${JSON.stringify(result)}`);
    return { request, jobId: String(result.requestState) };
  };

  it('relays the question as input_required; the retry with the answer makes the transfer once', async () => {
    const first = asked(ok(await transfer('acct-relay'), 'tools/call'));
    expect(first.request.method).toBe('elicitation/create');
    expect(first.request.params.message).toBe('Confirm the transfer of 5 to acct-relay');
    expect(first.request.params.requestedSchema).toMatchObject({
      properties: { confirm: { type: 'boolean' } },
      required: ['confirm'],
    });
    expect(first.jobId).toMatch(/^job_/);
    // The job waits for the answer, as any job whose call asked a person does.
    const waiting = await orchestrator.api('alpha').job(first.jobId);
    expect(waiting).toMatchObject({ kind: 'mcp', status: 'input_required' });
    expect(transfers('acct-relay', 'asked')).toHaveLength(1);
    expect(transfers('acct-relay', 'done')).toHaveLength(0);

    const answer = { action: 'accept', content: { confirm: true, memo: 'rent' } };
    const result = ok(
      await transfer('acct-relay', { inputResponses: { question: answer }, requestState: first.jobId }),
      'the retry with the answer',
    );
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('Transferred 5 to acct-relay');
    expect((result._meta as Json)[OUTCOME]).toMatchObject({
      status: 'ok',
      executed: 'yes',
      jobId: first.jobId,
    });
    expect(transfers('acct-relay', 'done')).toEqual([expect.objectContaining({ memo: 'rent' })]);

    // Recorded as an answer on /v1 is: once, with the key that gave it.
    const job = await orchestrator.api('alpha').job(first.jobId);
    expect(job.status).toBe('succeeded');
    const events = await orchestrator.api('alpha').events(first.jobId);
    const answered = events.filter((event) => event.event === 'input.answered');
    expect(answered).toHaveLength(1);
    expect(answered[0]?.data).toMatchObject({
      kind: 'question',
      action: 'accept',
      decidedBy: expect.stringMatching(/^alpha\/apiKeys\[0\]/),
    });
  });

  it("is answered by the v2 SDK client's own elicitation handler: the SDK makes the retry, the call returns the result", async () => {
    const client = new ModernClient(
      { name: 'switchyard-test-questions', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
    );
    const heard: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      heard.push(String(request.params.message));
      return { action: 'accept', content: { confirm: true, memo: 'sdk' } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', orchestrator.url), {
        requestInit: { headers: { authorization: `Bearer ${TEAM_KEYS.alpha}` } },
      }),
    );
    try {
      const result = await client.callTool({
        name: 'teller__transfer',
        arguments: { to: 'acct-sdk', amount: 5 },
      });
      expect(heard).toEqual(['Confirm the transfer of 5 to acct-sdk']);
      expect(JSON.stringify(result.content)).toContain('Transferred 5 to acct-sdk');
      expect(transfers('acct-sdk', 'done')).toEqual([expect.objectContaining({ memo: 'sdk' })]);
    } finally {
      await client.close();
    }
  });

  it('refuses an answer that does not match the requested schema, and the call still waits for one', async () => {
    const first = asked(ok(await transfer('acct-bad'), 'tools/call'));
    const wrong = await transfer('acct-bad', {
      inputResponses: { question: { action: 'accept', content: { confirm: 'yes' } } },
      requestState: first.jobId,
    });
    expect(wrong.error?.code).toBe(-32602);
    expect(wrong.error?.message).toMatch(/inputResponses\.question: .*confirm.*must be boolean/);
    // A retry without an answer is asked again, and a declined one ends the call without the transfer.
    expect(asked(ok(await transfer('acct-bad', { requestState: first.jobId }), 'retry')).jobId).toBe(
      first.jobId,
    );
    const declined = ok(
      await transfer('acct-bad', {
        inputResponses: { question: { action: 'decline' } },
        requestState: first.jobId,
      }),
      'declined',
    );
    expect(JSON.stringify(declined.content)).toContain('was not made: the person chose decline');
    expect(transfers('acct-bad', 'done')).toHaveLength(0);
  });

  it("takes requestState only for the team's own call of the same tool and arguments", async () => {
    const first = asked(ok(await transfer('acct-state'), 'tools/call'));
    const answer = { inputResponses: { question: { action: 'accept', content: { confirm: true } } } };
    const foreign = await transfer('acct-state', { ...answer, requestState: first.jobId }, 'beta');
    expect(foreign.error?.code).toBe(-32602);
    expect(foreign.error?.message).toMatch(/does not name a call of this team/);
    const forged = await transfer('acct-state', { ...answer, requestState: 'job_not-a-job' });
    expect(forged.error?.message).toMatch(/does not name a call of this team/);
    const changed = await mcp()(
      'tools/call',
      {
        name: 'teller__transfer',
        arguments: { to: 'acct-other', amount: 5 },
        ...answer,
        requestState: first.jobId,
      },
      { capabilities: ELICITATION },
    );
    expect(changed.error?.message).toMatch(/must repeat its tool and arguments/);
    expect(transfers('acct-state', 'done')).toHaveLength(0);
    expect(transfers('acct-other', 'asked')).toHaveLength(0);
  });

  /** The job of the team's one gateway call to `to` that waits for a person. */
  const waitingJob = async (to: string): Promise<string> => {
    const until = Date.now() + 60_000;
    for (;;) {
      const page = await orchestrator.api('alpha').request('GET', '/v1/jobs?status=input_required&kind=mcp');
      for (const listed of ((page.body as Json).jobs ?? []) as Json[]) {
        const job = await orchestrator.api('alpha').job(String(listed.id));
        if (job.request?.arguments?.to === to) return String(job.id);
      }
      if (Date.now() > until) throw new Error(`no gateway job for ${to} waits for a person`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('parks the question for a person when a 2026-07-28 client declares no elicitation; the answer on /v1 ends the held call', async () => {
    const held = mcp()('tools/call', {
      name: 'teller__transfer',
      arguments: { to: 'acct-person', amount: 5 },
    });
    const jobId = await waitingJob('acct-person');
    const answered = await orchestrator.api('alpha').request('POST', `/v1/jobs/${jobId}/input`, {
      toolCallId: 'call-1',
      action: 'accept',
      content: { confirm: true },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const result = ok(await held, 'the held call');
    expect(JSON.stringify(result.content)).toContain('Transferred 5 to acct-person');
    expect(transfers('acct-person', 'done')).toHaveLength(1);
  });

  it('parks it for a 2025-11-25 client too, which cannot be asked on a stateless endpoint', async () => {
    const client = await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2025-11-25');
    try {
      const held = client.callTool({ name: 'teller__transfer', arguments: { to: 'acct-legacy', amount: 5 } });
      const jobId = await waitingJob('acct-legacy');
      await orchestrator.api('alpha').request('POST', `/v1/jobs/${jobId}/input`, {
        toolCallId: 'call-1',
        action: 'accept',
        content: { confirm: true },
      });
      expect(JSON.stringify((await held).content)).toContain('Transferred 5 to acct-legacy');
    } finally {
      await client.close();
    }
  });
});
