import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { progressThrottle } from '../src/progress-throttle.ts';

describe('progressThrottle (at most one progress event per call per interval)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const recorder = () => {
    const emitted: Array<{ value: number; at: number }> = [];
    const start = Date.now();
    const emit = async (value: number) => {
      emitted.push({ value, at: Date.now() - start });
    };
    return { emitted, emit };
  };

  it('emits the first at once, then the newest of each interval, never two within one', async () => {
    const { emitted, emit } = recorder();
    const throttle = progressThrottle(emit, 500);
    // A server reporting every 100 ms for 1.2 s.
    for (let value = 1; value <= 12; value += 1) {
      throttle.push(value);
      await vi.advanceTimersByTimeAsync(100);
    }
    await throttle.close();
    expect(emitted.map((entry) => entry.value)).toEqual([1, 5, 10, 12]);
    // 500 ms apart; the last is the held one, emitted at close (the call's outcome came).
    expect(emitted.map((entry) => entry.at)).toEqual([0, 500, 1000, 1200]);
  });

  it('emits the held newest one on close, before close resolves (the outcome comes after it)', async () => {
    const { emitted, emit } = recorder();
    const throttle = progressThrottle(emit, 500);
    throttle.push(1);
    throttle.push(2);
    throttle.push(3);
    expect(emitted.map((entry) => entry.value)).toEqual([]);
    await throttle.close();
    expect(emitted.map((entry) => entry.value)).toEqual([1, 3]);
    throttle.push(4);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(emitted.map((entry) => entry.value)).toEqual([1, 3]);
  });

  it('holds nothing and emits nothing more when no progress is newer than the last emit', async () => {
    const { emitted, emit } = recorder();
    const throttle = progressThrottle(emit, 500);
    throttle.push(1);
    await vi.advanceTimersByTimeAsync(2_000);
    await throttle.close();
    expect(emitted.map((entry) => entry.value)).toEqual([1]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs emits one after another, and a failed emit loses only its own value', async () => {
    const order: string[] = [];
    let release: () => void = () => undefined;
    const throttle = progressThrottle(async (value: number) => {
      order.push(`start ${value}`);
      if (value === 1) await new Promise<void>((resolve) => (release = resolve));
      if (value === 2) throw new Error('store down');
      order.push(`end ${value}`);
    }, 500);
    throttle.push(1);
    await vi.advanceTimersByTimeAsync(500);
    throttle.push(2);
    await vi.advanceTimersByTimeAsync(500);
    throttle.push(3);
    expect(order).toEqual(['start 1']);
    release();
    await throttle.close();
    expect(order).toEqual(['start 1', 'end 1', 'start 2', 'start 3', 'end 3']);
  });
});
