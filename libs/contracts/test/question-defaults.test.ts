import { describe, expect, it } from 'vitest';
import { answerFromDefaults, withRequestedDefaults } from '../src/question.ts';

const schema = {
  type: 'object',
  properties: { format: { type: 'string', default: 'pdf' }, months: { type: 'integer', default: 3 } },
};

describe("a requested schema's defaults (SEP-1034)", () => {
  it('fill in only the fields an answer leaves out, falsy answers included', () => {
    expect(withRequestedDefaults(schema, { months: 0 })).toEqual({ format: 'pdf', months: 0 });
    expect(withRequestedDefaults(schema, { format: '', extra: 1 })).toEqual({
      format: '',
      months: 3,
      extra: 1,
    });
    const nullDefault = {
      properties: { note: { type: 'string', default: null }, plain: { type: 'string' } },
    };
    expect(withRequestedDefaults(nullDefault, {})).toEqual({ note: null });
    expect(withRequestedDefaults(undefined, { a: 1 })).toEqual({ a: 1 });
    expect(withRequestedDefaults({ properties: [] }, { a: 1 })).toEqual({ a: 1 });
  });

  it('make an answer alone only when every field has one', () => {
    expect(answerFromDefaults(schema)).toEqual({ format: 'pdf', months: 3 });
    expect(
      answerFromDefaults({ properties: { ...schema.properties, memo: { type: 'string' } } }),
    ).toBeUndefined();
    expect(answerFromDefaults({ type: 'object', properties: {} })).toBeUndefined();
    expect(answerFromDefaults(undefined)).toBeUndefined();
  });
});
