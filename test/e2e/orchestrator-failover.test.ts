import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';

/**
 * An orchestrator replica SIGKILLed in the middle of an agent run: another replica takes the run over
 * from its checkpoint, and the non-idempotent tool call made before the kill has run exactly once.
 */
describe('orchestrator replica killed mid-run', () => {
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = new Deployment('failover', (dir) => ({
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      search: exampleServer('search', { trusted: true }),
    }));
    await deployment.startWorker({ id: 'w-failover' });
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('finishes the job on the surviving replica without repeating the write', async () => {
    const replicas = await Promise.all([
      deployment.startOrchestrator('o-one'),
      deployment.startOrchestrator('o-two'),
    ]);
    const entry = replicas[0].api('alpha');
    const submitted = await entry.submit({
      kind: 'agent',
      input: 'Write a note, then search.',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { id: 'write', tool: 'notes__add_note', arguments: { text: 'exactly once', delayMs: 3_000 } },
            ],
          },
          { toolCalls: [{ id: 'look', tool: 'search__search', arguments: { query: 'checkpoint' } }] },
          { final: 'Written and searched.' },
        ],
      },
    });
    expect(submitted.status).toBe(201);
    // Whichever replica took the run says so in its `running` event.
    const running = (
      await entry.events(
        submitted.body.id,
        (event) => event.event === 'status' && event.data.status === 'running',
      )
    ).at(-1);
    const doomed = replicas.find(
      (replica) => replica.process.name === `orchestrator ${running?.data.replica}`,
    );
    const survivor = replicas.find((replica) => replica !== doomed);
    if (!doomed || !survivor) throw new Error(`no replica named ${running?.data.replica}`);
    // The write has reached the MCP server and is being held there: the run is mid-flight.
    await waitForLedger(deployment.path('notes.jsonl'), (rows) =>
      rows.some((row) => row.text === 'exactly once'),
    );
    await doomed.process.crash();

    const api = survivor.api('alpha');
    const job: Json = await api.finished(submitted.body.id);
    expect(job).toMatchObject({ status: 'succeeded', result: 'Written and searched.' });
    const byId = Object.fromEntries(job.toolCalls.map((call: Json) => [call.id, call]));
    expect(byId.write.outcome).toMatchObject({ status: 'ok', executed: 'yes' });
    expect(byId.look.outcome).toMatchObject({ status: 'ok' });

    const writes = readLedger(deployment.path('notes.jsonl')).filter((row) => row.text === 'exactly once');
    expect(writes.filter((row) => row.phase === 'start')).toHaveLength(1);
    expect(writes.filter((row) => row.phase === 'done')).toHaveLength(1);
    // The survivor took the run over from the checkpoint the dead replica left.
    expect(
      survivor.process.logs.some(
        (log) => log.msg === 'resuming run from its checkpoint' && log.job_id === submitted.body.id,
      ),
    ).toBe(true);
  });
});
