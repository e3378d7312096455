import { describe, expect, it } from 'vitest';
import { MAX_SCRIPT_DELAY_MS, ModelSpecSchema } from '../../src/models/index.ts';

/** Issues as [code, path] pairs, the part of a zod error the HTTP layer turns into a 400 body. */
const issuesOf = (input: unknown) => {
  const result = ModelSpecSchema.safeParse(input);
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => [issue.code, issue.path]) ?? [];
};

describe('model spec', () => {
  it('accepts a script and fills in empty tool arguments', () => {
    const spec = ModelSpecSchema.parse({
      provider: 'scripted',
      script: [
        { toolCalls: [{ tool: 'search__search' }, { tool: 'x', arguments: { q: 1 }, id: 'c1' }] },
        { final: 'done' },
      ],
    });
    expect(spec).toEqual({
      provider: 'scripted',
      script: [
        {
          toolCalls: [
            { tool: 'search__search', arguments: {} },
            { tool: 'x', arguments: { q: 1 }, id: 'c1' },
          ],
        },
        { final: 'done' },
      ],
    });
  });

  it('accepts each hosted provider with and without the optional knobs', () => {
    for (const provider of ['openai', 'anthropic', 'ollama'] as const) {
      expect(ModelSpecSchema.parse({ provider, name: 'm' })).toEqual({ provider, name: 'm' });
      const full = { provider, name: 'm', temperature: 0.5, maxTokens: 1024 };
      expect(ModelSpecSchema.parse(full)).toEqual(full);
    }
  });

  it('rejects an unknown provider at the discriminator', () => {
    expect(issuesOf({ provider: 'gemini', name: 'm' })).toEqual([['invalid_union', ['provider']]]);
  });

  it('rejects unknown keys', () => {
    expect(issuesOf({ provider: 'openai', name: 'm', topP: 1 })).toEqual([['unrecognized_keys', []]]);
    expect(issuesOf({ provider: 'scripted', script: [{ toolCalls: [{ tool: 't', args: {} }] }] })).toEqual([
      ['unrecognized_keys', ['script', 0, 'toolCalls', 0]],
    ]);
  });

  it('rejects an empty or too long script', () => {
    expect(issuesOf({ provider: 'scripted', script: [] })).toEqual([['too_small', ['script']]]);
    const turns = Array.from({ length: 201 }, () => ({ final: 'x' }));
    expect(issuesOf({ provider: 'scripted', script: turns })).toEqual([['too_big', ['script']]]);
  });

  it('points at a too long tool name inside the script', () => {
    const script = [{ final: 'a' }, { toolCalls: [{ tool: 'ok' }, { tool: 'x'.repeat(65) }] }];
    expect(issuesOf({ provider: 'scripted', script })).toEqual([
      ['too_big', ['script', 1, 'toolCalls', 1, 'tool']],
    ]);
  });

  it('rejects turns that are neither or both kinds, and empty tool-call lists', () => {
    expect(issuesOf({ provider: 'scripted', script: [{}] })).toEqual([['invalid_union', ['script', 0]]]);
    expect(issuesOf({ provider: 'scripted', script: [{ toolCalls: [{ tool: 't' }], final: 'x' }] })).toEqual([
      ['invalid_union', ['script', 0]],
    ]);
    expect(issuesOf({ provider: 'scripted', script: [{ toolCalls: [] }] })).toEqual([
      ['too_small', ['script', 0, 'toolCalls']],
    ]);
  });

  it('accepts a delay on either kind of turn and bounds it', () => {
    const script = [
      { toolCalls: [{ tool: 't', arguments: {} }], delayMs: 2_000 },
      { final: 'done', delayMs: MAX_SCRIPT_DELAY_MS },
      { final: 'no wait', delayMs: 0 },
    ];
    expect(ModelSpecSchema.parse({ provider: 'scripted', script })).toEqual({ provider: 'scripted', script });
    const turn = (delayMs: unknown) => ({ provider: 'scripted', script: [{ final: 'x', delayMs }] });
    expect(issuesOf(turn(MAX_SCRIPT_DELAY_MS + 1))).toEqual([['too_big', ['script', 0, 'delayMs']]]);
    expect(issuesOf(turn(-1))).toEqual([['too_small', ['script', 0, 'delayMs']]]);
    // A wrong type fails both kinds of turn alike, so zod reports the union (its issues list both).
    expect(issuesOf(turn(1.5))).toEqual([['invalid_union', ['script', 0]]]);
    expect(issuesOf(turn('2000'))).toEqual([['invalid_union', ['script', 0]]]);
  });

  it('bounds temperature and maxTokens', () => {
    expect(issuesOf({ provider: 'openai', name: 'm', temperature: 2.5 })).toEqual([
      ['too_big', ['temperature']],
    ]);
    expect(issuesOf({ provider: 'anthropic', name: 'm', temperature: 1.5 })).toEqual([
      ['too_big', ['temperature']],
    ]);
    expect(issuesOf({ provider: 'ollama', name: 'm', maxTokens: 0 })).toEqual([['too_small', ['maxTokens']]]);
    expect(issuesOf({ provider: 'openai', name: 'm', maxTokens: 1.5 })).toEqual([
      ['invalid_type', ['maxTokens']],
    ]);
    expect(issuesOf({ provider: 'openai', name: '' })).toEqual([['too_small', ['name']]]);
  });
});
