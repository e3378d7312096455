import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LockedQueue, lockHoldFor, type Store } from '../src/index.ts';
import { ContractQueues, contractBackends } from './contract-backends.ts';

/** How each backend shows and expires a job's lock, behind the port's back. */
function locks(store: Store) {
  if (store.kind === 'redis') {
    const lockKey = (queue: LockedQueue, id: string) => `${queue.toKey(id)}:lock`;
    return {
      /** The lock merely expired: what a worker frozen past its lock finds when it wakes. */
      expire: async (queue: LockedQueue, id: string) => {
        await store.redis.del(lockKey(queue, id));
      },
      of: async (queue: LockedQueue, id: string) => ({
        token: await store.redis.get(lockKey(queue, id)),
        expiresInMs: await store.redis.pttl(lockKey(queue, id)),
      }),
    };
  }
  return {
    expire: async (queue: LockedQueue, id: string) => {
      await store.pool.query('UPDATE job SET locked_until_ms = 0 WHERE queue = $1 AND id = $2', [
        queue.name,
        id,
      ]);
    },
    of: async (queue: LockedQueue, id: string) => {
      const { rows } = await store.pool.query<{ lock_token: string | null; locked_until_ms: string | null }>(
        'SELECT lock_token, locked_until_ms FROM job WHERE queue = $1 AND id = $2',
        [queue.name, id],
      );
      return {
        token: rows[0]?.lock_token ?? null,
        expiresInMs: Number(rows[0]?.locked_until_ms) - Date.now(),
      };
    },
  };
}

describe.each(contractBackends)('LockHold on $name', (backend) => {
  let queues: ContractQueues;
  let store: Store;
  let lock: ReturnType<typeof locks>;

  beforeAll(async () => {
    queues = await ContractQueues.open(backend, 'runs', 'hold');
    store = queues.store;
    lock = locks(store);
  });
  afterAll(() => queues?.close());

  it('keeps the lock under its own token only, pushing its expiry', async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('run', {}, { jobId: 'held' });
    const job = await queues.take(w, 'token-a');
    const hold = lockHoldFor(store, q);
    expect(
      await hold.hold({ id: 'held', attemptsStarted: job.attemptsStarted, token: 'token-b' }, 60_000),
    ).toBe(false);
    expect((await lock.of(q, 'held')).expiresInMs).toBeLessThanOrEqual(5_000);
    expect(
      await hold.hold({ id: 'held', attemptsStarted: job.attemptsStarted, token: 'token-a' }, 60_000),
    ).toBe(true);
    const after = await lock.of(q, 'held');
    expect(after.token).toBe('token-a');
    expect(after.expiresInMs).toBeGreaterThan(30_000);
  });

  it('takes back a lock that merely expired while nobody took the job', async () => {
    const q = queues.queue();
    const w = queues.worker(q.name, { lockDuration: 5_000 });
    await q.add('run', {}, { jobId: 'expired' });
    const job = await queues.take(w, 'token-a');
    await lock.expire(q, 'expired');
    const hold = lockHoldFor(store, q);
    expect(
      await hold.hold({ id: 'expired', attemptsStarted: job.attemptsStarted, token: 'token-a' }, 5_000),
    ).toBe(true);
    const after = await lock.of(q, 'expired');
    expect(after.token).toBe('token-a');
    expect(after.expiresInMs).toBeGreaterThan(1_000);
  });

  // Not 'stalled': on Redis a job id is a key under the queue's, and `stalled` is BullMQ's own set.
  it('does not take back a job the stalled check handed to another worker', async () => {
    const q = queues.queue();
    // A's lock is short and never renewed (a hand-driven worker renews nothing): it expires, and B's
    // stalled check marks the job on one pass and moves it back to waiting on the next.
    const a = queues.worker(q.name, { lockDuration: 500 });
    await q.add('run', {}, { jobId: 'handed-over' });
    const jobA = await queues.take(a, 'token-a');
    const jobB = await queues.takeOverStalled(q.name, 'handed-over', 'token-b');
    expect(jobB.id).toBe('handed-over');
    const hold = lockHoldFor(store, q);
    expect(
      await hold.hold({ id: 'handed-over', attemptsStarted: jobA.attemptsStarted, token: 'token-a' }, 5_000),
    ).toBe(false);
    expect(
      await hold.hold({ id: 'handed-over', attemptsStarted: jobB.attemptsStarted, token: 'token-b' }, 5_000),
    ).toBe(true);
    // Even once B's lock too has merely expired, A's token takes nothing back: the job is B's.
    await lock.expire(q, 'handed-over');
    expect(
      await hold.hold({ id: 'handed-over', attemptsStarted: jobA.attemptsStarted, token: 'token-a' }, 5_000),
    ).toBe(false);
    expect((await lock.of(q, 'handed-over')).token).not.toBe('token-a');
  });
});
