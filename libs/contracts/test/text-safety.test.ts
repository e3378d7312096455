import { describe, expect, it } from 'vitest';
import { findUnsafeJson, isSafeText, safeJson, safeText } from '../src/index.ts';

describe('text safety', () => {
  it('finds NULs and lone surrogates but accepts paired ones', () => {
    expect(isSafeText('plain, émoji 😀')).toBe(true);
    expect(isSafeText('nul\u0000here')).toBe(false);
    expect(isSafeText('lone \ud800 high')).toBe(false);
    expect(isSafeText('lone \udc00 low')).toBe(false);
    expect(safeText('a\u0000b\ud800c😀')).toBe('a\ufffdb\ufffdc😀');
  });

  it('cleans keys and values at any depth', () => {
    expect(safeJson({ 'k\u0000': ['v\ud800', { n: 1, s: 'ok' }] })).toEqual({
      'k\ufffd': ['v\ufffd', { n: 1, s: 'ok' }],
    });
  });

  it('names the path of the first problem, including depth', () => {
    expect(findUnsafeJson({ calls: [{ arguments: { q: 'x\u0000' } }] }, 64)).toEqual({
      path: 'calls.0.arguments.q',
      reason: 'contains a NUL character or an unpaired surrogate',
    });
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100; level++) deep = { deeper: deep };
    expect(findUnsafeJson({ arguments: deep }, 64)?.reason).toBe('is nested too deeply');
    expect(findUnsafeJson({ fine: [1, 'two', { three: null }] }, 64)).toBeUndefined();
  });
});
