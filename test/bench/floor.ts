import { randomUUID } from 'node:crypto';
import { duplicateRedis } from '@switchyard/contracts';
import {
  type ConnectionOptions,
  createPostgresBackend,
  type IQueueBackend,
  type Job,
  type PostgresConnectionOptions,
  type PostgresQueueBackend,
  Queue,
  QueueEvents,
  type RedisQueueBackend,
} from 'bullmq';
import pg from 'pg';
import { DATABASE_URL } from '../support/backend.ts';
import type { Fleet } from '../support/fleet.ts';
import { REPO_ROOT, tsxArgs } from '../support/paths.ts';
import { connect, redisEnv } from '../support/redis.ts';

const FLOOR_WORKER = `${REPO_ROOT}/test/bench/floor-worker.ts`;

/** A floor's queue: no-op jobs of no particular data, on `B`'s backend. */
type FloorQueue<B extends IQueueBackend, C> = Queue<unknown, unknown, string, unknown, unknown, string, B, C>;

/**
 * The producer side every floor shares: jobs added to its queue and awaited the standard way, through
 * its QueueEvents. A subclass makes the two on its backend and starts the worker process.
 */
abstract class FloorProducer<B extends IQueueBackend, C> {
  protected abstract readonly queue: FloorQueue<B, C>;
  protected abstract readonly events: QueueEvents<unknown, B, C>;

  /** `label`: how a burst's timeout names this floor (`floor <queue>`). */
  protected constructor(private readonly label: string) {}

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
        () => reject(new Error(`${this.label}: ${left} of ${count} jobs not completed in ${timeoutMs} ms`)),
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
    let stopSweep = (): void => undefined;
    try {
      stopSweep = await this.sweep(count, () => {
        for (const jobId of [...ids]) onCompleted({ jobId });
      });
      await Promise.all([...ids].map((jobId) => this.queue.add('noop', { text: 'x' }, { jobId })));
      await done;
    } finally {
      stopSweep();
      this.events.off('completed', onCompleted);
    }
  }

  /**
   * A second way for a burst of `count` jobs to settle (`settleAll` counts every job left as completed),
   * started before the jobs are added; returns its stop. None by default: the `completed` events suffice.
   */
  protected async sweep(_count: number, _settleAll: () => void): Promise<() => void> {
    return () => undefined;
  }
}

/**
 * The bare-BullMQ floor, on a fleet's prefix and Redis (so Fleet.close deletes its keys and stops its
 * worker): a no-op Worker in its own process, and a producer here that adds a job and waits for its
 * completion the standard way (QueueEvents, a blocking read of the queue's event stream). On a Redis
 * Cluster the queue name needs a hash tag (`floor.{x}`, like Switchyard's `tools.{server}`) so that
 * all of the queue's keys share a slot.
 */
export class Floor extends FloorProducer<RedisQueueBackend, ConnectionOptions> {
  private readonly redis: ReturnType<typeof connect>;
  protected readonly queue: FloorQueue<RedisQueueBackend, ConnectionOptions>;
  protected readonly events: QueueEvents;

  private constructor(queueName: string, fleet: Fleet) {
    super(`floor ${queueName}`);
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

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    await this.redis.quit().catch(() => undefined);
  }
}

/**
 * The bare-BullMQ floor on BullMQ's PostgreSQL backend: the same no-op worker process and producer as
 * Floor, built with `createPostgresBackend` on a fresh schema of their own (dropped on close), so the
 * PostgreSQL paths are compared with what BullMQ itself does on PostgreSQL.
 */
export class PostgresFloor extends FloorProducer<PostgresQueueBackend, PostgresConnectionOptions> {
  protected readonly queue: FloorQueue<PostgresQueueBackend, PostgresConnectionOptions>;
  protected readonly events: QueueEvents<unknown, PostgresQueueBackend, PostgresConnectionOptions>;

  private constructor(
    queueName: string,
    private readonly databaseUrl: string,
    private readonly schema: string,
  ) {
    super(`postgres floor ${queueName}`);
    const connection = { connectionString: databaseUrl, schema, migrate: true, max: 4 };
    this.queue = new Queue(queueName, { connection }, createPostgresBackend);
    this.events = new QueueEvents(queueName, { connection }, createPostgresBackend);
  }

  static async start(
    fleet: Fleet,
    options: { queue: string; concurrency?: number; globalConcurrency?: number; databaseUrl?: string },
  ): Promise<PostgresFloor> {
    const databaseUrl = options.databaseUrl ?? DATABASE_URL;
    const schema = `floor_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const floor = new PostgresFloor(options.queue, databaseUrl, schema);
    try {
      // Migrated by the producer first, so the worker process finds the schema made.
      await floor.queue.waitUntilReady();
      await floor.events.waitUntilReady();
      const worker = fleet.group.start(`floor worker ${options.queue} (postgres)`, tsxArgs(FLOOR_WORKER), {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_SCHEMA: schema,
        BENCH_PREFIX: fleet.prefix,
        BENCH_QUEUE: options.queue,
        BENCH_CONCURRENCY: String(options.concurrency ?? 1),
        ...(options.globalConcurrency ? { BENCH_GLOBAL_CONCURRENCY: String(options.globalConcurrency) } : {}),
      });
      await worker.waitFor(
        (log) => log.msg === 'floor worker ready',
        `floor worker ${options.queue} (postgres)`,
      );
      return floor;
    } catch (error) {
      await floor.close();
      throw error;
    }
  }

  // BullMQ's PostgreSQL QueueEvents can miss a `completed` event (seen: 1 of 100 under load): once a
  // second the completed count also settles the burst.
  protected override async sweep(count: number, settleAll: () => void): Promise<() => void> {
    const baseline = await this.queue.getCompletedCount();
    const sweep = setInterval(() => {
      void this.queue.getCompletedCount().then(
        (completed) => {
          if (completed - baseline >= count) settleAll();
        },
        () => undefined,
      );
    }, 1_000);
    return () => clearInterval(sweep);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close()]);
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    } finally {
      await client.end();
    }
  }
}
