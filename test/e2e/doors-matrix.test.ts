import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { connectGateway, type GatewayClient, REVISIONS, type Revision } from '../support/mcp-clients.ts';

/** A key that only decides approvals of team alpha (teams.alpha.approverKeys). */
const ALPHA_APPROVER = 'alpha-approver-000000000009';
/** Team capped may have one job queued or running at a time (teams.capped.maxConcurrentJobs). */
const KEYS = { ...TEAM_KEYS, capped: 'capped-key-000000000000010' };
const IDEMPOTENCY = 'io.switchyard/idempotency-key';
const OUTCOME = 'io.switchyard/outcome';

type Door = 'batch' | 'agent' | `mcp ${Revision}`;
const DOORS: Door[] = ['batch', 'agent', ...REVISIONS.map((revision) => `mcp ${revision}` as const)];
type Team = 'alpha' | 'beta' | 'searchers' | 'capped';

/** What a door made of one call: whether it ran, as the door told its caller, and the job behind it. */
interface Decision {
  /** The door refused the call outright (an HTTP 4xx, a JSON-RPC error): nothing was recorded to run. */
  refused?: string;
  /** The call waited for a person: the job, the call and the approval's digest. */
  waiting?: { jobId: string; callId: string; digest: string };
  /** How the call ended, as the door reported it. */
  status?: string;
  executed?: string;
}

/**
 * One tool-call life cycle for every door (issue 19): the same policy — allowed, outside the team's
 * filter, an approval required by the team's rule or the server's, an idempotency key reused with the
 * same and with other arguments, an unknown tool — gives the same decision through a batch job, an agent
 * run and /mcp on both MCP revisions, judged by the notes server's own ledger of writes.
 */
describe('the doors matrix: batch, agent and /mcp keep the same rules', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const clients = new Map<string, GatewayClient>();
  const ledger = () => readLedger(deployment.path('notes.jsonl'));
  /** The completed writes of one text: what the server really did. */
  const writes = (text: string) => ledger().filter((row) => row.phase === 'done' && row.text === text);
  const deletes = (id: string) => ledger().filter((row) => row.tool === 'delete_note' && row.id === id);

  beforeAll(async () => {
    deployment = new Deployment(
      'doors',
      (dir) => ({
        notes: exampleServer('notes', {
          env: { NOTES_LEDGER: `${dir}/notes.jsonl` },
          // The server-wide rule: every team's delete needs a person.
          approval: { default: 'never', tools: { delete_note: 'required' } },
        }),
        // Holds team capped's one job open while its other calls knock at every door.
        slow: exampleServer('slow', { concurrency: 2 }),
      }),
      {
        teams: {
          // The team's own rule: its writes need a person, and only its approver key decides them.
          alpha: {
            apiKeys: [TEAM_KEYS.alpha],
            approverKeys: [ALPHA_APPROVER],
            approval: {
              notes: { default: 'never', tools: { add_note: 'required', delete_note: 'required' } },
            },
          },
          beta: { apiKeys: [TEAM_KEYS.beta] },
          searchers: { apiKeys: [TEAM_KEYS.searchers], tools: { allow: ['search__*'] } },
          capped: { apiKeys: [KEYS.capped], maxConcurrentJobs: 1 },
        },
      },
    );
    await deployment.startWorker({ id: 'w-doors' });
    orchestrator = await deployment.startOrchestrator('o-doors');
  });

  afterAll(async () => {
    await Promise.all([...clients.values()].map((client) => client.close().catch(() => undefined)));
    await deployment?.close();
  });

  const api = (team: Team): ApiClient => orchestrator.api().withKey(KEYS[team]);
  /** Who decides a team's approvals: alpha's approver key; a team without one, its own key. */
  const approver = (team: Team) =>
    team === 'alpha' ? orchestrator.api().withKey(ALPHA_APPROVER) : api(team);

  const gateway = async (revision: Revision, team: Team): Promise<GatewayClient> => {
    const name = `${revision}/${team}`;
    const known = clients.get(name);
    if (known) return known;
    const client = await connectGateway(orchestrator.url, KEYS[team], revision);
    clients.set(name, client);
    return client;
  };

  /** The job's one pending approval, once the job waits for it. */
  const pendingApproval = async (jobId: string, team: Team) => {
    await api(team).events(
      jobId,
      (event) => event.event === 'status' && event.data.status === 'input_required',
    );
    const job: Json = await api(team).job(jobId);
    const pending = job.pendingInputs.find((input: Json) => input.kind === 'approval');
    expect(pending, JSON.stringify(job.pendingInputs)).toBeDefined();
    return { callId: String(pending.toolCallId), digest: String(pending.digest) };
  };

  /**
   * Makes one call through `door` as `team` and returns the door's decision. A call that waits for a
   * person is decided by `decide` (approve or deny, by the approver key) and followed to its end.
   */
  async function call(
    door: Door,
    team: Team,
    tool: string,
    args: Record<string, unknown>,
    options: { key?: string; decide?: 'approve' | 'deny' } = {},
  ): Promise<Decision> {
    if (door === 'batch' || door === 'agent') {
      const body =
        door === 'batch'
          ? { kind: 'batch', calls: [{ tool, arguments: args }] }
          : {
              kind: 'agent',
              input: 'Do it.',
              model: {
                provider: 'scripted',
                script: [{ toolCalls: [{ id: 'c1', tool, arguments: args }] }, { final: 'Done.' }],
              },
            };
      const submitted = await api(team).submit(body, options.key ? { 'idempotency-key': options.key } : {});
      if (submitted.status >= 400) return { refused: `${submitted.status} ${submitted.body?.type ?? ''}` };
      const jobId = String(submitted.body.id);
      if (options.decide) {
        const { callId, digest } = await pendingApproval(jobId, team);
        const decided = await approver(team).request('POST', `/v1/jobs/${jobId}/approvals/${callId}`, {
          decision: options.decide,
          digest,
        });
        expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      }
      const job: Json = await api(team).finished(jobId);
      const outcome = job.toolCalls[0]?.outcome;
      return outcome ? { status: outcome.status, executed: outcome.executed } : { refused: 'no call' };
    }
    const revision = door.slice('mcp '.length) as Revision;
    const client = await gateway(revision, team);
    let decided: Promise<unknown> | undefined;
    const onprogress = (progress: { message?: string }) => {
      const jobId = /job (job_[0-9a-f-]+)/.exec(progress.message ?? '')?.[1];
      if (!jobId || !options.decide || decided) return;
      decided = (async () => {
        const { callId, digest } = await pendingApproval(jobId, team);
        const response = await approver(team).request('POST', `/v1/jobs/${jobId}/approvals/${callId}`, {
          decision: options.decide,
          digest,
        });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
      })();
    };
    try {
      const result: Json = await client.callTool(
        { name: tool, arguments: args, ...(options.key ? { _meta: { [IDEMPOTENCY]: options.key } } : {}) },
        undefined,
        { onprogress, timeout: 90_000 },
      );
      await decided;
      const outcome = result._meta?.[OUTCOME];
      if (!outcome) return { refused: `isError without an outcome: ${JSON.stringify(result.content)}` };
      return { status: outcome.status, executed: outcome.executed };
    } catch (error) {
      return { refused: `json-rpc ${(error as { code?: number }).code ?? ''} ${(error as Error).message}` };
    }
  }

  // The gated write ran through a JSON-RPC batch array too (issue 19, item 1).
  it('gates a call inside a JSON-RPC batch array like any other', async () => {
    const text = 'gated-in-a-batch-array';
    const controller = new AbortController();
    const response = fetch(`${orchestrator.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEAM_KEYS.alpha}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify([
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'notes__add_note', arguments: { text } },
        },
      ]),
      signal: controller.signal,
    }).then(
      async (answer) => ({ status: answer.status, body: await answer.text() }),
      () => undefined,
    );
    // Either the endpoint refuses the array, or the call waits for a person: never a write.
    const waiting = (async () => {
      for (const until = Date.now() + 30_000; Date.now() < until; ) {
        const listed = await api('alpha').request('GET', '/v1/jobs?kind=mcp&status=input_required&limit=200');
        // The suite's only call left waiting: every other one was decided and followed to its end.
        const job = listed.body.jobs?.[0];
        if (job) return job.id as string;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return undefined;
    })();
    const first = await Promise.race([
      response.then((answer) => ({ answer })),
      waiting.then((jobId) => ({ jobId })),
    ]);
    controller.abort();
    if ('answer' in first) expect(first.answer?.body ?? '').not.toContain('"isError":false');
    else expect(first.jobId, 'the gated call neither refused nor waiting').toBeDefined();
    expect(ledger().filter((row) => row.text === text)).toEqual([]);
  });

  for (const door of DOORS) {
    const tag = door.replace(/[^a-z0-9]/g, '-');

    describe(`through ${door}`, () => {
      it('runs an allowed call once', async () => {
        const text = `allowed-${tag}`;
        expect(await call(door, 'beta', 'notes__add_note', { text })).toMatchObject({
          status: 'ok',
          executed: 'yes',
        });
        expect(writes(text)).toHaveLength(1);
      });

      it("refuses a tool outside the team's filter, and an unknown tool, without running anything", async () => {
        const text = `filtered-${tag}`;
        const filtered = await call(door, 'searchers', 'notes__add_note', { text });
        const unknown = await call(door, 'beta', 'notes__add_notes', { text });
        for (const decision of [filtered, unknown]) {
          // A refusal at the door, or an outcome that says the tool did not run: never a run.
          if (!decision.refused) expect(decision).toMatchObject({ executed: 'no' });
        }
        expect(ledger().filter((row) => row.text === text)).toEqual([]);
      });

      it("holds a call the team's rule gates until a person approves it, and never runs a denied one", async () => {
        const approved = `gated-approved-${tag}`;
        const denied = `gated-denied-${tag}`;
        if (door === 'batch') {
          // A batch cannot wait for a person: the gated call is not sent.
          expect(await call(door, 'alpha', 'notes__add_note', { text: approved })).toMatchObject({
            status: 'denied',
            executed: 'no',
          });
          expect(writes(approved)).toEqual([]);
          return;
        }
        expect(
          await call(door, 'alpha', 'notes__add_note', { text: approved }, { decide: 'approve' }),
        ).toMatchObject({ status: 'ok', executed: 'yes' });
        expect(writes(approved)).toHaveLength(1);
        expect(
          await call(door, 'alpha', 'notes__add_note', { text: denied }, { decide: 'deny' }),
        ).toMatchObject({ status: 'denied', executed: 'no' });
        expect(ledger().filter((row) => row.text === denied)).toEqual([]);
      });

      it("holds a call the server's rule gates for any team", async () => {
        const id = `note-${tag}-gone`;
        const decision =
          door === 'batch'
            ? await call(door, 'beta', 'notes__delete_note', { id })
            : await call(door, 'beta', 'notes__delete_note', { id }, { decide: 'deny' });
        expect(decision).toMatchObject({ status: 'denied', executed: 'no' });
        expect(deletes(id)).toEqual([]);
      });

      it('joins a retry with the same key and arguments, and refuses the key with other arguments', async () => {
        const key = `doors-key-${tag}`;
        const first = await call(door, 'beta', 'notes__add_note', { text: `keyed-A-${tag}` }, { key });
        const again = await call(door, 'beta', 'notes__add_note', { text: `keyed-A-${tag}` }, { key });
        const other = await call(door, 'beta', 'notes__add_note', { text: `keyed-B-${tag}` }, { key });
        expect(first).toMatchObject({ status: 'ok', executed: 'yes' });
        expect(again).toMatchObject({ status: 'ok', executed: 'yes' });
        expect(other.refused, JSON.stringify(other)).toBeDefined();
        expect(writes(`keyed-A-${tag}`)).toHaveLength(1);
        // The client was never told a write ran that did not.
        expect(ledger().filter((row) => row.text === `keyed-B-${tag}`)).toEqual([]);
      });
    });
  }

  it('refuses a team over its job quota at every door, before anything runs', async () => {
    const holder = await api('capped').submit({
      kind: 'batch',
      calls: [{ tool: 'slow__sleep', arguments: { ms: 60_000 } }],
    });
    expect(holder.status, JSON.stringify(holder.body)).toBe(201);
    const holderId = String(holder.body.id);
    try {
      await api('capped').events(holderId, (event) => event.event === 'tool_call.dispatched');
      for (const door of DOORS) {
        const text = `over-quota-${door.replace(/[^a-z0-9]/g, '-')}`;
        const decision = await call(door, 'capped', 'notes__add_note', { text });
        // /v1 answers 429 (a problem naming the quota); /mcp a tool error a model can read.
        if (door === 'batch' || door === 'agent') expect(decision.refused, door).toMatch(/^429 /);
        else expect(decision.refused, door).toMatch(/\[rate_limited\].*maxConcurrentJobs/);
        expect(ledger().filter((row) => row.text === text)).toEqual([]);
      }
    } finally {
      await api('capped').request('POST', `/v1/jobs/${holderId}/cancel`);
    }
    const job: Json = await api('capped').finished(holderId);
    expect(job.status).toBe('cancelled');
  });
});
