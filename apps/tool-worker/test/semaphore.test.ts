import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../src/runtime/backoff.ts';
import { Semaphore } from '../src/runtime/semaphore.ts';
import { StderrTail } from '../src/sessions/stderr-tail.ts';

describe('semaphore', () => {
  it('never lets more than its capacity run, and serves waiters in order', async () => {
    const semaphore = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const tasks = Array.from({ length: 5 }, (_, index) =>
      semaphore.run(async () => {
        running += 1;
        peak = Math.max(peak, running);
        order.push(index);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
      }),
    );
    while (order.length < 5) {
      await Promise.resolve();
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const release of releases) release();
    await Promise.all(tasks);
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('tryAcquire refuses when full', () => {
    const semaphore = new Semaphore(1);
    expect(semaphore.tryAcquire()).toBe(true);
    expect(semaphore.tryAcquire()).toBe(false);
    semaphore.release();
    expect(semaphore.tryAcquire()).toBe(true);
  });
});

describe('backoff', () => {
  it('grows exponentially, with jitter, up to the cap', () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const delay = backoffDelay(attempt, 100, 5_000);
      const ceiling = Math.min(5_000, 100 * 2 ** attempt);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});

describe('stderr tail', () => {
  it('keeps only the last lines within its byte limit', () => {
    const tail = new StderrTail(100);
    for (let line = 0; line < 50; line++) tail.push(`line ${line}\n`);
    expect(tail.tail(2)).toBe('line 48\nline 49');
    expect(tail.tail(100).length).toBeLessThanOrEqual(100);
  });
});
