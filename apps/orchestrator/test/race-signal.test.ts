import { describe, expect, it } from 'vitest';
import { raceSignal } from '../src/tool-calls/call-lease.ts';

/** Rejects with `message` once `later` resolves: a call in flight whose lease check fails after the stop. */
function rejectingLater(message: string): { work: Promise<never>; fire: () => void } {
  let fire: () => void = () => undefined;
  const work = new Promise<never>((_, reject) => {
    fire = () => reject(new Error(message));
  });
  return { work, fire };
}

describe('raceSignal', () => {
  it('rejects with the stop error at once when the signal had already aborted, and handles the work', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stopped = AbortSignal.abort();
      const { work, fire } = rejectingLater('lease lost after the stop');
      await expect(raceSignal(work, stopped, () => new Error('the run was stopped'))).rejects.toThrow(
        'the run was stopped',
      );
      fire();
      // Two turns of the event loop: long enough for Node to report an unhandled rejection.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("passes the work's own result or failure through while the signal holds", async () => {
    const controller = new AbortController();
    await expect(raceSignal(Promise.resolve(7), controller.signal, () => new Error('stopped'))).resolves.toBe(
      7,
    );
    const { work, fire } = rejectingLater('tool failed');
    const raced = raceSignal(work, controller.signal, () => new Error('stopped'));
    fire();
    await expect(raced).rejects.toThrow('tool failed');
  });

  it('rejects with the stop error when the signal aborts first', async () => {
    const controller = new AbortController();
    const raced = raceSignal(
      new Promise<never>(() => undefined),
      controller.signal,
      () => new Error('stopped'),
    );
    controller.abort();
    await expect(raced).rejects.toThrow('stopped');
  });
});
