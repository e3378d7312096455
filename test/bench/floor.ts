import { randomUUID } from 'node:crypto';
import { duplicateRedis } from '@switchyard/contracts';
import { type Job, Queue, QueueEvents } from 'bullmq';
import type { Fleet } from '../support/fleet.ts';
import { REPO_ROOT, tsxArgs } from '../support/paths.ts';
import { connect, redisEnv } from '../support/redis.ts';

const FLOOR_WORKER = `${REPO_ROOT}/test/bench/floor-worker.ts`;

/**
 * The bare-BullMQ floor, on a fleet's prefix and Redis (so Fleet.close deletes its keys and stops its
 * worker): a no-op Worker in its own process, and a producer here that adds a job and waits for its
 * completion the standard way (QueueEvents, a blocking read of the queue's event stream). On a Redis
 * Cluster the queue name needs a hash tag (`floor.{x}`, like Switchyard's `tools.{server}`) so that
 * all of the queue's keys share a slot.
 */
export class Floor {
  private readonly redis: ReturnType<typeof connect>;
  private readonly queue: Queue;
  private readonly events: QueueEvents;

  private constructor(
    private readonly queueName: string,
    fleet: Fleet,
  ) {
    const prefix = fleet.prefix;
    this.redis = connect('switchyard-bench-floor', fleet.redisUrl, fleet.redisClusterNodes);
    this.queue = new Queue(queueName, { connection: this.redis, prefix });
    this.events = new QueueEvents(queueName, {
      connection: duplicateRedis(this.redis, 'switchyard-bench-floor'),
      prefix,
    });
  }

  /** Starts the no-op worker process (global concurrency when given) and the producer side. */
  static async start(
    fleet: Fleet,
    options: { queue: string; concurrency?: number; globalConcurrency?: number },
  ): Promise<Floor> {
    const floor = new Floor(options.queue, fleet);
    try {
      await floor.events.waitUntilReady();
      const worker = fleet.group.start(`floor worker ${options.queue}`, tsxArgs(FLOOR_WORKER), {
        ...redisEnv(fleet.redisUrl, fleet.redisClusterNodes),
        BENCH_PREFIX: fleet.prefix,
        BENCH_QUEUE: options.queue,
        BENCH_CONCURRENCY: String(options.concurrency ?? 1),
        ...(options.globalConcurrency ? { BENCH_GLOBAL_CONCURRENCY: String(options.globalConcurrency) } : {}),
      });
      await worker.waitFor((log) => log.msg === 'floor worker ready', `floor worker ${options.queue}`);
      return floor;
    } catch (error) {
      await floor.close();
      throw error;
    }
  }

  /** One job added and awaited. */
  async roundTrip(): Promise<void> {
    const job: Job = await this.queue.add('noop', { text: 'x' }, { jobId: randomUUID() });
    await job.waitUntilFinished(this.events, 30_000);
  }

  /** `count` jobs added at once; resolves when every one has completed. */
  async burst(count: number, timeoutMs = 120_000): Promise<void> {
    const ids = new Set<string>(Array.from({ length: count }, () => randomUUID()));
    let left = count;
    let onCompleted: (event: { jobId: string }) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`floor ${this.queueName}: ${left} of ${count} jobs not completed in ${timeoutMs} ms`),
          ),
        timeoutMs,
      );
      onCompleted = ({ jobId }) => {
        if (ids.delete(jobId)) left -= 1;
        if (left === 0) {
          clearTimeout(timer);
          resolve();
        }
      };
      this.events.on('completed', onCompleted);
    });
    try {
      await Promise.all([...ids].map((jobId) => this.queue.add('noop', { text: 'x' }, { jobId })));
      await done;
    } finally {
      this.events.off('completed', onCompleted);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    await this.redis.quit().catch(() => undefined);
  }
}
