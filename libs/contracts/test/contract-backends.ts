import { randomUUID } from 'node:crypto';
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { redisService } from '../../../test/support/services.ts';
import { bullmqBinding, closeStore, openStore, redisStore, type Store } from '../src/index.ts';

/**
 * The stores every port's contract test (in libs/contracts, apps/orchestrator and apps/tool-worker) runs
 * the same cases against: Redis under a unique prefix (its keys deleted at the end) and PostgreSQL in a
 * fresh queue schema (dropped at the end). Each store's connections carry a unique name, so a test can
 * cut exactly its own.
 *
 * Redis drops out when nothing answers (a laptop with PostgreSQL alone, or an embedded one): the
 * PostgreSQL cases still run. vitest.shared.ts reads this file to know that a contract test needs
 * PostgreSQL only, so keep the database URL read below as `process.env.DATABASE_URL`.
 */
export interface ContractBackend {
  name: 'redis' | 'postgres';
  open(): Promise<OpenedStore>;
}

export interface OpenedStore {
  store: Store;
  /** Drops the connection(s) whose name ends with `pgSuffix` (PG) or that run `redisCommand` (Redis). */
  cut(what: { pgSuffix: string; redisCommand: string }): Promise<number>;
  /** Removes what the test wrote and closes every connection; safe to call after a failed case. */
  close(): Promise<void>;
}

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const redis = await redisService();

export const redisBackend: ContractBackend = {
  name: 'redis',
  async open() {
    const prefix = `sy-test-contract-${randomUUID().slice(0, 8)}`;
    // Duplicates inherit the name: that is how cut() finds this test's subscribers and readers.
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null, connectionName: prefix });
    return {
      store: redisStore(connection, prefix),
      async cut({ redisCommand }) {
        const clients = String(await connection.client('LIST'))
          .split('\n')
          .filter((line) => line.includes(` name=${prefix} `) && line.includes(` cmd=${redisCommand}`));
        for (const line of clients) {
          await connection.client('KILL', 'ID', /id=(\d+)/.exec(line)?.[1] as string);
        }
        return clients.length;
      },
      async close() {
        try {
          const keys = await connection.keys(`${prefix}:*`);
          if (keys.length > 0) await connection.del(...keys);
        } finally {
          await connection.quit().catch(() => connection.disconnect());
        }
      },
    };
  },
};

export const postgresBackend: ContractBackend = {
  name: 'postgres',
  async open() {
    const id = randomUUID().replaceAll('-', '').slice(0, 12);
    const store = await openStore({
      choice: { backend: 'postgres', reason: 'test' },
      prefix: `t_${id}`,
      redis: { url: redis.url },
      databaseUrl: DATABASE_URL,
      connectionName: `sy-test-contract-${id}`,
    });
    if (store.kind !== 'postgres') throw new Error('expected a postgres store');
    return {
      store,
      async cut({ pgSuffix }) {
        // PostgreSQL keeps 63 bytes of an application_name, as the store's own names are cut.
        const { rows } = await store.pool.query<{ cut: boolean }>(
          'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = $1',
          [`${store.applicationName}${pgSuffix}`.slice(0, 63)],
        );
        return rows.length;
      },
      async close() {
        try {
          await store.pool.query(`DROP SCHEMA IF EXISTS ${store.schema} CASCADE`);
        } finally {
          await closeStore(store);
        }
      },
    };
  },
};

if (!redis.up) {
  console.log(`contract tests: skipping the Redis cases, nothing answers at ${redis.url}; PostgreSQL's run`);
}

export const contractBackends: ContractBackend[] = redis.up
  ? [redisBackend, postgresBackend]
  : [postgresBackend];

/** Collects what a handler is given and lets a test wait for a condition on it, without sleeping. */
export class Collected<T> {
  readonly items: T[] = [];
  private waiters: Array<{ until: (items: T[]) => boolean; resolve: () => void }> = [];

  readonly push = (item: T): void => {
    this.items.push(item);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.until(this.items)) return true;
      waiter.resolve();
      return false;
    });
  };

  /** Resolves once `until` holds; rejects naming what arrived after `timeoutMs`. */
  wait(until: (items: T[]) => boolean, timeoutMs = 10_000): Promise<T[]> {
    if (until(this.items)) return Promise.resolve(this.items);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`not there after ${timeoutMs} ms; got ${JSON.stringify(this.items).slice(0, 500)}`));
      }, timeoutMs);
      this.waiters.push({
        until,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.items);
        },
      });
    });
  }
}

/**
 * BullMQ on a contract store, for the ports that work on BullMQ's own data: a queue of its own per case
 * (`<kind>.{<tag>-<random>}`) and hand-driven workers (no processor: a case fetches jobs with its own
 * token). close() ends them, and whatever else was handed to onClose, last first; then the store, when
 * opened here (`open`).
 */
export class ContractQueues {
  private readonly closers: Array<() => Promise<unknown>> = [];

  constructor(
    readonly store: Store,
    private readonly kind: 'tools' | 'runs',
    private readonly tag: string,
    /** The store as `open` opened it, closed by close() (a failure there is the caller's). */
    private readonly opened?: OpenedStore,
  ) {}

  /** Opens `backend`'s store, with queues of `kind` and `tag` on it: what a describe block's beforeAll does. */
  static async open(backend: ContractBackend, kind: 'tools' | 'runs', tag: string): Promise<ContractQueues> {
    const opened = await backend.open();
    return new ContractQueues(opened.store, kind, tag, opened);
  }

  queue(): Queue {
    const binding = bullmqBinding(this.store);
    const name = `${this.kind}.{${this.tag}-${randomUUID().slice(0, 8)}}`;
    const created = new Queue(name, binding.options, binding.factory as never);
    this.onClose(() => created.close());
    return created;
  }

  worker(name: string, opts: Partial<WorkerOptions>): Worker {
    const binding = bullmqBinding(this.store);
    const created = new Worker(name, null, { ...binding.options, ...opts }, binding.factory as never);
    created.on('error', () => undefined); // a late finish's refusal is asserted where it matters
    this.onClose(() => created.close(true));
    return created;
  }

  /** The next job, fetched under `token`; throws when there is none. */
  async take(from: Worker, token: string): Promise<Job> {
    const job = await from.getNextJob(token);
    if (!job) throw new Error(`no job for ${token}`);
    return job;
  }

  /**
   * BullMQ's stalled hand-over of job `id`, whose lock a hand-driven worker let lapse (it renews
   * nothing): a second worker's stalled check marks the job on one pass and moves it back to waiting on
   * the next, and that worker takes it under `token`.
   */
  async takeOverStalled(queueName: string, id: string, token: string): Promise<Job> {
    const taker = this.worker(queueName, { lockDuration: 30_000, stalledInterval: 200, maxStalledCount: 5 });
    const stalled = new Promise<void>((resolve) => {
      const listener = (stalledId: string) => {
        if (stalledId !== id) return;
        taker.off('stalled', listener);
        resolve();
      };
      taker.on('stalled', listener);
    });
    await taker.startStalledCheckTimer();
    await stalled;
    return this.take(taker, token);
  }

  onClose(close: () => Promise<unknown>): void {
    this.closers.push(close);
  }

  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await close().catch(() => undefined);
    await this.opened?.close();
  }
}
