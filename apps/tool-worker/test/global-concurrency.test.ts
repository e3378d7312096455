import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { GatedWorker } from '../src/execution/gated-worker.ts';
import { GlobalConcurrency } from '../src/execution/global-concurrency.ts';
import type { Logger } from '../src/runtime/logger.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `sy-test-concurrency-${randomUUID().slice(0, 8)}`;
const quiet = (): undefined => undefined;
const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => log } as unknown as Logger;
const producer = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

/** Everything a test opened, closed after it even when it failed. */
const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close().catch(() => undefined);
});
afterAll(async () => {
  const keys = await producer.keys(`${prefix}:*`);
  if (keys.length > 0) await producer.del(...keys);
  await producer.quit();
});

interface Interval {
  start: number;
  end: number;
}

/** One worker process's consumer of a concurrency-1 queue: its own connection, keeper and worker. */
function consumer(queueName: string, ran: Interval[], checkEveryMs = 60_000) {
  // A slow reconnect leaves room to wake both workers while their command connections are down.
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null, retryStrategy: () => 400 });
  const queue = new Queue(queueName, { connection, prefix });
  const concurrency = new GlobalConcurrency({
    queue,
    reconnects: connection,
    concurrency: 1,
    checkEveryMs,
    server: queueName,
    log,
  });
  const worker = new GatedWorker<unknown, void>(
    queueName,
    async () => {
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 150));
      ran.push({ start, end: Date.now() });
    },
    { connection, prefix, autorun: false, concurrency: 1 },
    concurrency,
  );
  opened.push(async () => {
    concurrency.stop();
    await worker.close(true);
    await queue.close();
    connection.disconnect();
  });
  return { connection, queue, concurrency, worker };
}

describe('global concurrency that Redis forgot', () => {
  it('is set again by the next check when the meta hash lost it', async () => {
    const { queue, concurrency } = consumer(`tools.{check-${randomUUID().slice(0, 6)}}`, [], 50);
    await concurrency.start();
    expect(await queue.getGlobalConcurrency()).toBe(1);
    await producer.hdel(queue.toKey('meta'), 'concurrency');
    await vi.waitFor(async () => expect(await queue.getGlobalConcurrency()).toBe(1), { timeout: 5_000 });
    // A value changed behind the config's back is put back too.
    await producer.hset(queue.toKey('meta'), 'concurrency', 3);
    await vi.waitFor(async () => expect(await queue.getGlobalConcurrency()).toBe(1), { timeout: 5_000 });
  });

  it('takes no call after a reconnect until the limit is set again on that connection', async () => {
    const queueName = `tools.{gate-${randomUUID().slice(0, 6)}}`;
    const ran: Interval[] = [];
    // Its heartbeat check never fires here: only the reconnect re-sets the limit.
    const { connection, concurrency, worker, queue } = consumer(queueName, ran);
    const drained = new Promise((resolve) => worker.once('drained', () => resolve(undefined)));
    await concurrency.start();
    void worker.run();
    await drained;
    // What reaches Redis, in order: the limit's write and the script's move of a job to active.
    const monitor = await new Redis(REDIS_URL).monitor();
    opened.push(async () => monitor.disconnect());
    const seen: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const [command, key, field] = args.map(String);
      if (command?.toLowerCase() === 'hset' && key === queue.toKey('meta') && field === 'concurrency') {
        seen.push('limit set');
      } else if (/^(rpoplpush|lmove)$/i.test(command ?? '') && key === queue.toKey('wait')) {
        seen.push('job taken');
      }
    });

    // The data is lost and the command connection drops; a call arrives before it is back. It wakes the
    // worker's blocking wait (its own connection, still up), which then asks the reconnecting command
    // connection for the job: ioredis sends what was queued meanwhile before it reports 'ready'.
    await producer.del(queue.toKey('meta'));
    connection.disconnect(true);
    const producerQueue = new Queue(queueName, { connection: producer, prefix });
    opened.push(() => producerQueue.close());
    await producerQueue.add('call', {});

    await vi.waitFor(() => expect(ran).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await vi.waitFor(() => expect(seen).toContain('limit set'), { timeout: 5_000, interval: 20 });
    expect(seen.slice(0, 2)).toEqual(['limit set', 'job taken']);
    expect(await producerQueue.getGlobalConcurrency()).toBe(1);
  });
});
