import type { Store } from '@switchyard/contracts';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractQueues, contractBackends } from '../../../libs/contracts/test/contract-backends.ts';
import { GlobalConcurrency, reconnectsOf } from '../src/execution/global-concurrency.ts';
import type { Logger } from '../src/runtime/logger.ts';

const quiet = (): undefined => undefined;
const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => log } as unknown as Logger;

/** The limit forgotten or changed behind the keeper's back (an empty Redis, an older backup restored). */
function meta(store: Store, queue: Queue) {
  if (store.kind === 'redis') {
    return {
      forget: async () => void (await store.redis.hdel(queue.toKey('meta'), 'concurrency')),
      change: async (to: number) => void (await store.redis.hset(queue.toKey('meta'), 'concurrency', to)),
    };
  }
  const sql = 'UPDATE meta SET value = $2 WHERE queue = $1 AND field = $3';
  return {
    forget: async () =>
      void (await store.pool.query("DELETE FROM meta WHERE queue = $1 AND field = 'concurrency'", [
        queue.name,
      ])),
    change: async (to: number) => void (await store.pool.query(sql, [queue.name, String(to), 'concurrency'])),
  };
}

describe.each(contractBackends)('GlobalConcurrency on $name', (backend) => {
  let queues: ContractQueues;

  beforeAll(async () => {
    queues = await ContractQueues.open(backend, 'tools', 'gc');
  });
  afterAll(() => queues?.close());

  it('sets the limit at start, keeps the gate open, and puts the limit back when it was lost or changed', async () => {
    const queue = queues.queue();
    const keeper = new GlobalConcurrency({
      queue,
      reconnects: reconnectsOf(queues.store),
      concurrency: 2,
      // The heartbeat's check is run by hand below: no timer races the test's own writes.
      checkEveryMs: 600_000,
      server: 'gc',
      log,
    });
    queues.onClose(async () => keeper.stop());
    await keeper.start();
    expect(await queue.getGlobalConcurrency()).toBe(2);
    expect(keeper.isOpen).toBe(true);
    await keeper.ready();

    const lose = meta(queues.store, queue);
    await lose.forget();
    expect(await queue.getGlobalConcurrency()).toBeNull();
    await keeper.check();
    expect(await queue.getGlobalConcurrency()).toBe(2);
    await lose.change(5);
    expect(await queue.getGlobalConcurrency()).toBe(5);
    await keeper.check();
    expect(await queue.getGlobalConcurrency()).toBe(2);
    expect(keeper.isOpen).toBe(true);
  });
});
