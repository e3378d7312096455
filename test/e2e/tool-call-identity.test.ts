import { catalogStoreOf } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServerPath, tsxArgs } from '../support/paths.ts';

/** Seconds the notes server takes to start: its tool list stays unpublished that long. */
const STARTUP_SECONDS = 8;

/**
 * Which tool a call names, and which call an outcome belongs to (issue 8 items 5 and 7): a name is
 * resolved exactly, even before the server has published its tools, and two calls sharing a model
 * tool-call id are two calls with two outcomes.
 */
describe('tool call identity', () => {
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = new Deployment(
      'identity',
      (dir) => ({
        notes: {
          transport: 'stdio',
          // A server slow to start: the worker's session connects long after the jobs arrive.
          command: '/bin/sh',
          args: [
            '-c',
            `sleep ${STARTUP_SECONDS} && exec "$0" "$@"`,
            process.execPath,
            ...tsxArgs(exampleServerPath('notes')),
          ],
          env: { NOTES_LEDGER: `${dir}/notes.jsonl` },
        },
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha], tools: { allow: ['*'], deny: ['notes__add_note'] } },
          beta: { apiKeys: [TEAM_KEYS.beta] },
        },
      },
    );
    await deployment.startOrchestrator('o-identity');
    await deployment.startWorker({ id: 'w-identity', waitFor: [] });
    // A worker serves notes, but its session is still connecting: nothing is published yet.
    await deployment.sessionState('notes', 'connecting');
  }, 180_000);

  afterAll(async () => {
    await deployment?.close();
  });

  it('refuses a name that is not exactly an allowed tool while the catalog is unpublished', {
    timeout: 120_000,
  }, async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [
        { tool: 'notes__add_note__x', arguments: { text: 'sneaky' } },
        { tool: 'notes__add_note', arguments: { text: 'denied' } },
        { tool: 'notes__list_notes', arguments: {} },
      ],
    });
    expect(submitted.status).toBe(201);
    // The precondition: the jobs reached the orchestrator before the server published its tools.
    const catalog = catalogStoreOf(await deployment.suiteStore());
    expect(await catalog.missingTools(['notes'])).toEqual(['notes']);

    const job: Json = await api.finished(submitted.body.id, 90_000);
    // Two of its calls were refused: the batch ended, not every call ok.
    expect(job.status).toBe('completed_with_errors');
    expect(
      job.toolCalls.map((call: Json) => [call.tool, call.outcome.status, call.outcome.executed]),
    ).toEqual([
      ['notes__add_note__x', 'failed', 'no'],
      ['notes__add_note', 'failed', 'no'],
      ['notes__list_notes', 'ok', 'yes'],
    ]);
    expect(job.toolCalls[0].outcome.error).toBe('unknown_or_disallowed_tool');
    // The server never saw a write.
    expect(readLedger(deployment.path('notes.jsonl')).filter((row) => row.tool === 'add_note')).toEqual([]);
  });

  it('runs two calls that share a model tool-call id as two calls', { timeout: 120_000 }, async () => {
    const api = deployment.api('beta');
    const write = (text: string) => ({ id: 'same', tool: 'notes__add_note', arguments: { text } });
    const job: Json = await api.finished(
      (
        await api.submit({
          kind: 'agent',
          input: 'Write three notes.',
          model: {
            provider: 'scripted',
            script: [
              { toolCalls: [write('dup-a'), write('dup-b')] },
              { toolCalls: [write('dup-c')] },
              { final: 'done' },
            ],
          },
        })
      ).body.id,
      90_000,
    );
    expect(job.status).toBe('succeeded');
    // Each call has its own record: its own id, its own arguments and its own outcome.
    expect(job.toolCalls.map((call: Json) => [call.id, call.arguments.text, call.outcome.status])).toEqual([
      ['same', 'dup-a', 'ok'],
      ['same#2', 'dup-b', 'ok'],
      ['same#3', 'dup-c', 'ok'],
    ]);
    const noteIds = job.toolCalls.map((call: Json) => call.outcome.structuredContent.id);
    expect(new Set(noteIds).size).toBe(3);
    const starts = readLedger(deployment.path('notes.jsonl')).filter(
      (row) => row.tool === 'add_note' && row.phase === 'start',
    );
    expect(starts.map((row) => row.text).sort()).toEqual(['dup-a', 'dup-b', 'dup-c']);
    // The model gets each result under the id it used, in the order it asked.
    const answers = job.messages.filter((message: Json) => message.role === 'tool');
    expect(answers.map((message: Json) => [message.toolCallId, message.content])).toEqual(
      job.toolCalls.map((call: Json) => ['same', call.outcome.text]),
    );
  });
});
