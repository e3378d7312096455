import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeForStatus } from '../src/exit-codes.ts';
import { jobRequestFrom } from '../src/jobs/job-request-input.ts';
import { UsageError } from '../src/usage-error.ts';

describe('jobs submit: the request from flags or a file', () => {
  it('pairs each --args with its --tool, defaulting to no arguments', () => {
    expect(
      jobRequestFrom(undefined, {
        tool: ['search__search', 'notes__add_note', 'search__search'],
        args: ['{"query":"a"}', '{"text":"b"}'],
        metadata: ['ticket=OPS-42', 'note=a=b'],
      }),
    ).toEqual({
      kind: 'batch',
      calls: [
        { tool: 'search__search', arguments: { query: 'a' } },
        { tool: 'notes__add_note', arguments: { text: 'b' } },
        { tool: 'search__search', arguments: {} },
      ],
      metadata: { ticket: 'OPS-42', note: 'a=b' },
    });
  });

  it('builds an agent job with its model, tool patterns and step limit', () => {
    expect(
      jobRequestFrom(undefined, {
        agent: true,
        input: 'Summarise',
        model: 'openai:gpt-4.1-mini',
        allow: ['search__*'],
        maxSteps: 5,
      }),
    ).toEqual({
      kind: 'agent',
      input: 'Summarise',
      model: { provider: 'openai', name: 'gpt-4.1-mini' },
      tools: { allow: ['search__*'] },
      limits: { maxSteps: 5 },
    });
  });

  it('reads YAML or JSON files and stdin, adding --metadata to the file’s own', () => {
    const file = join(tmpdir(), `switchyard-cli-${process.pid}.yaml`);
    writeFileSync(file, 'kind: batch\ncalls:\n  - tool: search__search\nmetadata: { ticket: OPS-1 }\n');
    expect(jobRequestFrom(file, { metadata: ['run=7'] })).toEqual({
      kind: 'batch',
      calls: [{ tool: 'search__search' }],
      metadata: { ticket: 'OPS-1', run: '7' },
    });
    expect(jobRequestFrom('-', {}, () => '{"kind":"agent","input":"hi"}')).toEqual({
      kind: 'agent',
      input: 'hi',
    });
  });

  it('refuses what cannot be sent, naming the flag or file', () => {
    const cases: Array<[string | undefined, Parameters<typeof jobRequestFrom>[1], RegExp]> = [
      [undefined, {}, /nothing to submit/],
      ['job.json', { tool: ['x'] }, /a job file or --tool\/--agent flags, not both/],
      [undefined, { tool: ['x'], args: ['{}', '{}'] }, /--args given 2 times for 1 --tool/],
      [undefined, { tool: ['x'], args: ['nope'] }, /--args #1: not JSON/],
      [undefined, { tool: ['x'], args: ['"text"'] }, /--args #1: must be a JSON object/],
      [undefined, { agent: true }, /--agent needs --input/],
      [undefined, { agent: true, input: 'x', tool: ['y'] }, /--tool makes a batch/],
      [undefined, { input: 'x', model: 'openai:' }, /--model "openai:": write <provider>:<name>/],
      [undefined, { tool: ['x'], metadata: ['novalue'] }, /--metadata "novalue": write <key>=<value>/],
      ['/no/such/job.yaml', {}, /job file \/no\/such\/job\.yaml: ENOENT/],
    ];
    for (const [file, flags, message] of cases) {
      expect(() => jobRequestFrom(file, flags), message.source).toThrow(UsageError);
      expect(() => jobRequestFrom(file, flags), message.source).toThrow(message);
    }
    expect(() => jobRequestFrom('-', {}, () => '- a\n- list')).toThrow(/must hold one job/);
    expect(() => jobRequestFrom('-', {}, () => 'kind: [unclosed')).toThrow(/not JSON or YAML/);
  });
});

describe('exit codes', () => {
  it('say how a watched job ended', () => {
    expect(
      ['succeeded', 'failed', 'completed_with_errors', 'cancelled', 'input_required'].map(exitCodeForStatus),
    ).toEqual([EXIT.ok, EXIT.failed, EXIT.completedWithErrors, EXIT.cancelled, EXIT.inputRequired]);
    expect(new Set(Object.values(EXIT)).size).toBe(Object.keys(EXIT).length);
  });
});
