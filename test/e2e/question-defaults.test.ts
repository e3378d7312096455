import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/** An agent run (a question parks a run for a person; a batch call ends `input_required`). */
const statement = (server: string) => ({
  kind: 'agent',
  input: 'Send the statement.',
  model: {
    provider: 'scripted',
    script: [
      { toolCalls: [{ id: 'send', tool: `${server}__statement`, arguments: { account: 'ACME' } }] },
      { final: 'Sent.' },
    ],
  },
});

/**
 * SEP-1034 (docs/semantics.md §14): a question's requested schema may give each field a default. The
 * worker fills those in for the fields an accepted answer leaves out, and a server whose
 * `elicitation.answerWithDefaults` is on gets an all-defaults question answered with them at once.
 * The teller's `statement` asks {format: default pdf, months: required, default 3}.
 */
describe("a tool's question with defaults", () => {
  let deployment: Deployment;
  let api: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment('question-defaults', (dir) => ({
      teller: exampleServer('teller', { env: { TELLER_LEDGER: `${dir}/teller.jsonl` } }),
      quick: exampleServer('teller', {
        env: { TELLER_LEDGER: `${dir}/quick.jsonl` },
        elicitation: { answerWithDefaults: true },
      }),
    }));
    await deployment.startWorker();
    api = (await deployment.startOrchestrator()).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('is answered with its defaults at once where the server opts in: no person, one round', async () => {
    const submitted = await api.submit(statement('quick'));
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const job: Json = await api.finished(String(submitted.body.id));
    expect(job.status).toBe('succeeded');
    expect(job.pendingInputs).toEqual([]);
    expect(job.toolCalls).toHaveLength(1);
    const [call] = job.toolCalls;
    expect(call.outcome).toMatchObject({ status: 'ok', attempts: 1 });
    expect(call.outcome.text).toContain('Statement of ACME: 3 months as pdf.');
  });

  it('waits for a person elsewhere; an answer that leaves fields out gets their defaults', async () => {
    const submitted = await api.submit(statement('teller'));
    const id = String(submitted.body.id);
    await api.events(id, (event) => event.event === 'status' && event.data.status === 'input_required');
    const parked: Json = await api.job(id);
    const [pending] = parked.pendingInputs;
    expect(pending).toMatchObject({
      kind: 'question',
      question: { message: 'How should the statement of ACME be sent?' },
    });
    // `months` is required, but has a default: leaving it out is an answer, not a 400.
    const answered = await api.request('POST', `/v1/jobs/${id}/input`, {
      toolCallId: pending.toolCallId,
      action: 'accept',
      content: { format: 'csv' },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const job: Json = await api.finished(id);
    expect(job.status).toBe('succeeded');
    const text = job.toolCalls.map((call: Json) => String(call.outcome?.text ?? '')).join('\n');
    expect(text).toContain('Statement of ACME: 3 months as csv.');
  });
});
