import { describe, expect, it } from 'vitest';
import { ArgumentValidator, isIdempotent } from '../src/index.ts';

describe('idempotency rule (docs/semantics.md)', () => {
  const server = (
    overrides: Partial<{ idempotent: string[]; nonIdempotent: string[]; trusted: boolean }>,
  ) => ({
    idempotent: [],
    nonIdempotent: [],
    trusted: false,
    ...overrides,
  });

  it('defaults to non-idempotent, as MCP does', () => {
    expect(isIdempotent(server({}), 'write', undefined)).toBe(false);
  });
  it('believes annotations only from trusted servers', () => {
    expect(isIdempotent(server({}), 'read', { readOnlyHint: true })).toBe(false);
    expect(isIdempotent(server({ trusted: true }), 'read', { readOnlyHint: true })).toBe(true);
    expect(isIdempotent(server({ trusted: true }), 'put', { idempotentHint: true })).toBe(true);
    expect(isIdempotent(server({ trusted: true }), 'write', { destructiveHint: true })).toBe(false);
  });
  it('lets the config override annotations both ways', () => {
    expect(isIdempotent(server({ idempotent: ['search'] }), 'search', undefined)).toBe(true);
    expect(
      isIdempotent(server({ trusted: true, nonIdempotent: ['read'] }), 'read', { readOnlyHint: true }),
    ).toBe(false);
  });
});

describe('argument validation', () => {
  const validator = new ArgumentValidator();
  const schema = {
    type: 'object',
    properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 20 } },
    required: ['query'],
    additionalProperties: false,
  };

  it('accepts valid arguments and names each problem with invalid ones', () => {
    expect(validator.check(schema, { query: 'x', limit: 3 })).toEqual({ ok: true });
    const result = validator.check(schema, { limit: 99, extra: true });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors).toEqual(
        expect.arrayContaining([
          "arguments: must have required property 'query'",
          'arguments.limit: must be <= 20',
          'arguments: unexpected property "extra"',
        ]),
      );
    }
  });

  it('understands draft 2020-12 schemas', () => {
    const modern = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
      },
    };
    expect(validator.check(modern, { pair: ['a', 1] })).toEqual({ ok: true });
    expect(validator.check(modern, { pair: ['a', 1, 'extra'] }).ok).toBe(false);
    expect(validator.check(modern, 'not an object').ok).toBe(false);
  });

  it('does not make a tool uncallable because its server published a broken schema', () => {
    const result = validator.check({ type: 'no-such-type' }, {});
    expect(result).toMatchObject({ ok: true, warning: expect.stringContaining('does not compile') });
  });
});
