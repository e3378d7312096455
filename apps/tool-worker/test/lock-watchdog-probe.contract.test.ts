import type { LockedQueue, Store } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { LockWatchdog } from '../src/execution/lock-watchdog.ts';
import { lockWatchdogProbe } from '../src/execution/lock-watchdog-probe.ts';

/** The queue the probe reads on Redis (its meta hash); PostgreSQL only needs the store. */
function probedQueue(store: Store): LockedQueue {
  const name = 'tools.{probe}';
  return { name, toKey: (type) => `${store.prefix}:${name}:${type}` };
}

/**
 * The lock watchdog's probe on each backend: answered while the store is there, unanswered once the
 * route to it is gone — which is what makes the watchdog (lock-watchdog.ts) call the locks lost.
 */
describe.each(contractBackends)('the lock watchdog probe on $name', (backend) => {
  const opened: OpenedStore[] = [];
  let store: Store;

  beforeAll(async () => {
    const first = await backend.open();
    opened.push(first);
    store = first.store;
  });
  afterAll(async () => {
    for (const each of opened) await each.close().catch(() => undefined);
  });

  it('is answered while the store is up', async () => {
    const probe = lockWatchdogProbe(store, probedQueue(store));
    await expect(probe()).resolves.not.toThrow();
    await expect(Promise.all([probe(), probe(), probe()])).resolves.toHaveLength(3);
  });

  it('goes unanswered once the store is gone, and the watchdog then calls the locks lost', async () => {
    // A store of its own: this case takes it away.
    const own = await backend.open();
    opened.push(own);
    const probe = lockWatchdogProbe(own.store, probedQueue(own.store));
    let answers = 0;
    let answered: () => void = () => undefined;
    const threeAnswers = new Promise<void>((resolve) => {
      answered = () => {
        answers += 1;
        if (answers === 3) resolve();
      };
    });
    let lost: (silentMs: number) => void = () => undefined;
    const wentLost = new Promise<number>((resolve) => {
      lost = resolve;
    });
    const watchdog = new LockWatchdog({
      probe: () =>
        probe().then((reply) => {
          answered();
          return reply;
        }),
      lockDurationMs: 1_200,
      onLost: (silentMs) => lost(silentMs),
      onRestored: () => undefined,
    });
    try {
      watchdog.start();
      await threeAnswers;
      expect(watchdog.isLost).toBe(false);
      await own.close();
      expect(await wentLost).toBeGreaterThanOrEqual(1_200);
      expect(watchdog.isLost).toBe(true);
    } finally {
      watchdog.stop();
    }
  });
});
