import { describe, expect, it } from 'vitest';
import { argumentsDigest, canonicalJson, needsApproval } from '../src/approval.ts';

const server = (approval: Parameters<typeof needsApproval>[0]['approval'], more = {}) => ({
  approval,
  trusted: false,
  nonIdempotent: [] as string[],
  ...more,
});

describe('needsApproval', () => {
  it('required and never are what they say, per tool when given per tool', () => {
    const setting = { default: 'required' as const, tools: { read: 'never' as const } };
    expect(needsApproval(server(setting), undefined, 'write', undefined)).toBe(true);
    expect(needsApproval(server(setting), undefined, 'read', undefined)).toBe(false);
    expect(needsApproval(server('never'), undefined, 'write', { destructiveHint: true })).toBe(false);
  });

  it('auto believes destructiveHint only from a trusted server, and always the nonIdempotent list', () => {
    expect(needsApproval(server('auto'), undefined, 'drop', { destructiveHint: true })).toBe(false);
    expect(
      needsApproval(server('auto', { trusted: true }), undefined, 'drop', { destructiveHint: true }),
    ).toBe(true);
    expect(
      needsApproval(server('auto', { trusted: true }), undefined, 'drop', { destructiveHint: false }),
    ).toBe(false);
    expect(needsApproval(server('auto', { nonIdempotent: ['pay'] }), undefined, 'pay', undefined)).toBe(true);
  });

  it("a team's setting for the server wins over the server's own", () => {
    expect(needsApproval(server('never'), 'required', 'write', undefined)).toBe(true);
    expect(needsApproval(server('required'), { default: 'never', tools: {} }, 'write', undefined)).toBe(
      false,
    );
  });
});

describe('argumentsDigest', () => {
  it('is the same whatever the key order, and differs when any value differs', () => {
    const a = argumentsDigest({ to: 'x', amount: 1, meta: { b: 2, a: [1, { d: 1, c: 2 }] } });
    const b = argumentsDigest({ meta: { a: [1, { c: 2, d: 1 }], b: 2 }, amount: 1, to: 'x' });
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(argumentsDigest({ to: 'x', amount: 2, meta: { b: 2, a: [1, { d: 1, c: 2 }] } })).not.toBe(a);
  });

  it('canonical JSON sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: [2, 1], a: { z: null, y: 'é' } })).toBe('{"a":{"y":"é","z":null},"b":[2,1]}');
  });
});
