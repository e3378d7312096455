import { describe, expect, it } from 'vitest';
import { ClockOffsetGate, storeName } from '../src/index.ts';

describe('ClockOffsetGate', () => {
  it('exists only on postgres, with a tenth of the lock duration as its bound', () => {
    expect(ClockOffsetGate.for({ kind: 'redis' }, 30_000)).toBeUndefined();
    expect(ClockOffsetGate.for({ kind: 'postgres' }, 30_000)?.limitMs).toBe(3_000);
    expect(storeName({ kind: 'postgres' })).toBe('PostgreSQL');
    expect(storeName({ kind: 'redis' })).toBe('Redis');
  });

  it('refuses past the bound either way and says so once per flip, then resumes within it', () => {
    const gate = new ClockOffsetGate(200);
    expect(gate.observe({ offsetMs: 150, rttMs: 1 })).toBeUndefined();
    expect(gate.current.refusing).toBe(false);
    expect(gate.observe({ offsetMs: -400_000, rttMs: 2 })).toMatchObject({
      refusing: true,
      offsetMs: -400_000,
      limitMs: 200,
    });
    // Still out: no second flip, but the state follows the latest sample.
    expect(gate.observe({ offsetMs: 250, rttMs: 2 })).toBeUndefined();
    expect(gate.current).toMatchObject({ refusing: true, offsetMs: 250 });
    expect(gate.observe({ offsetMs: -20, rttMs: 2 })).toMatchObject({ refusing: false, offsetMs: -20 });
  });

  it('does not refuse for an offset only a slow round trip could have put past the bound', () => {
    const gate = new ClockOffsetGate(200);
    // Known to within ±150 ms: the true offset may be 100 ms.
    expect(gate.observe({ offsetMs: 250, rttMs: 300 })).toBeUndefined();
    expect(gate.observe({ offsetMs: 251, rttMs: 100 })?.refusing).toBe(true);
  });
});
