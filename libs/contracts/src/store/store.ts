import {
  type BackendFactory,
  MIGRATION_ADVISORY_LOCK_KEY,
  PostgresConnection,
  type PostgresConnectionOptions,
  PostgresQueueBackend,
  runMigrations,
} from 'bullmq';
import pg from 'pg';
import { isDependencyOutage } from '../dependency-outage.ts';
import { connectRedis, type RedisConnection, type RedisTarget } from '../redis-connection.ts';
import type { BackendChoice } from './backend-choice.ts';
import { QUEUE_SIDE_TABLES } from './postgres/queue-tables.ts';
import { queueSchemaName } from './queue-schema.ts';

/**
 * The deployment's store of queues and queue-side state: Redis, or PostgreSQL (docs/postgres-backend.md).
 * One per process, opened once; every concern that lives next to the queues takes it and picks its own
 * implementation by `kind` (one port per concern, a Redis and a PostgreSQL side).
 */
export type Store = RedisStore | PostgresStore;

export interface RedisStore {
  kind: 'redis';
  prefix: string;
  /** The shared command connection; a concern that blocks or subscribes duplicates it. */
  redis: RedisConnection;
  target: RedisTarget;
  reason: string;
}

export interface PostgresStore {
  kind: 'postgres';
  prefix: string;
  url: string;
  /** The queue schema (queue-schema.ts): BullMQ's tables and Switchyard's queue-side ones. */
  schema: string;
  /**
   * The process's one pool for the queue schema (search_path): Switchyard's ports and every BullMQ Queue and
   * Worker (bullmqBinding) share it, so connections do not grow with the number of servers.
   */
  pool: pg.Pool;
  /** Names this process's connections in pg_stat_activity. */
  applicationName: string;
  reason: string;
}

export interface StoreOptions {
  choice: BackendChoice;
  prefix: string;
  redis: RedisTarget;
  /** The PostgreSQL the postgres backend uses (DATABASE_URL). */
  databaseUrl: string;
  /** Names connections: `switchyard-worker-<id>`. */
  connectionName: string;
  onError?: (error: unknown, what: string) => void;
  /** Connections for queries; each BullMQ Worker adds one more for its LISTEN (bullmqBinding). */
  poolMax?: number;
  /** How long start-up waits for a PostgreSQL that is restarting or not up yet (default 120 s). */
  startupWaitMs?: number;
}

/** Opens the store; on postgres also prepares the queue schema (BullMQ's migrations, then Switchyard's tables). */
export async function openStore(options: StoreOptions): Promise<Store> {
  const { choice, prefix } = options;
  if (choice.backend === 'redis') {
    const redis = connectRedis(options.redis, options.connectionName);
    redis.on('error', (error) => options.onError?.(error, 'redis connection error'));
    return { kind: 'redis', prefix, redis, target: options.redis, reason: choice.reason };
  }
  const schema = queueSchemaName(prefix);
  const applicationName = options.connectionName.slice(0, 63);
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    options: `-c search_path=${schema}`,
    application_name: applicationName,
    max: options.poolMax ?? 6,
    connectionTimeoutMillis: 10_000,
  });
  pool.on('error', (error) => options.onError?.(error, 'idle PostgreSQL connection lost'));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onError?.(error, 'PostgreSQL connection lost'));
  });
  const store: PostgresStore = {
    kind: 'postgres',
    prefix,
    url: options.databaseUrl,
    schema,
    pool,
    applicationName,
    reason: choice.reason,
  };
  try {
    await whileUnreachable(() => prepareQueueSchema(store), options);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return store;
}

/**
 * Runs start-up work again while PostgreSQL is unreachable (a restart, a failover, not up yet), with
 * backoff, up to `startupWaitMs`: a process started meanwhile waits for it instead of exiting. Any other
 * failure (bad credentials, a schema of a newer BullMQ) is thrown at once.
 */
async function whileUnreachable(work: () => Promise<void>, options: StoreOptions): Promise<void> {
  const giveUpAt = Date.now() + (options.startupWaitMs ?? 120_000);
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await work();
    } catch (error) {
      if (!isDependencyOutage(error) || Date.now() + delayMs > giveUpAt) throw error;
      options.onError?.(error, 'preparing the queue schema: PostgreSQL unreachable; retrying');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/**
 * BullMQ's migrations (idempotent, under its own advisory lock), then Switchyard's queue-side tables under
 * the same lock, so replicas starting at once take turns and none sees a half-made schema.
 */
export async function prepareQueueSchema(store: PostgresStore): Promise<void> {
  const client = await store.pool.connect();
  let failure: Error | undefined;
  try {
    await runMigrations(client, store.schema);
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    try {
      for (const statement of Object.values(QUEUE_SIDE_TABLES)) await client.query(statement);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    }
  } catch (error) {
    failure = error as Error;
    throw error;
  } finally {
    // A connection that failed is dropped, not handed back to the pool for the next query to meet.
    client.release(failure);
  }
}

/** A store around a Redis connection the caller already holds (tests, the bench, the CLI). */
export function redisStore(redis: RedisConnection, prefix: string, target?: RedisTarget): RedisStore {
  return { kind: 'redis', prefix, redis, target: target ?? { url: '' }, reason: 'given' };
}

export async function closeStore(store: Store): Promise<void> {
  if (store.kind === 'redis') {
    await store.redis.quit().catch(() => store.redis.disconnect());
    return;
  }
  await store.pool.end().catch(() => undefined);
}

/** The Redis connection of a concern that has no PostgreSQL side yet: on postgres, a clear error naming it. */
export function redisOf(store: Store, concern: string): RedisConnection {
  if (store.kind === 'redis') return store.redis;
  throw new Error(`${concern} has no PostgreSQL implementation yet (backend: postgres)`);
}

/**
 * What a BullMQ Queue or Worker is built with on this store: its options' `connection` (and `prefix` on
 * Redis) and the backend factory (undefined: BullMQ's Redis default).
 */
export function bullmqBinding(store: Store) {
  if (store.kind === 'redis') {
    return { options: { connection: store.redis, prefix: store.prefix }, factory: undefined };
  }
  return { options: { connection: store.pool }, factory: sharedPoolBackend(store) };
}

/**
 * BullMQ's PostgreSQL backend on the store's one pool. Given its own pool per Queue and Worker (a config
 * object), BullMQ would open up to three connections for each, per server per process: a worker serving ten
 * servers and two orchestrators exhaust a default max_connections of 100. Given a pool, BullMQ assumes its
 * default schema for its compatibility check, so the connection is told the queue schema the pool's
 * search_path already pins. A Worker's LISTEN keeps one pooled connection for its whole life: the pool
 * grows by one for each, so queries never wait behind them.
 */
function sharedPoolBackend(
  store: PostgresStore,
): BackendFactory<PostgresQueueBackend, PostgresConnectionOptions> {
  return (name, opts, factoryOptions = {}) => {
    const connection = new PostgresConnection(store.pool);
    Object.defineProperty(connection, 'schema', { value: store.schema });
    // Named as BullMQ's own factory names it, so getWorkers finds it in pg_stat_activity.
    const workerName = (opts as { name?: string }).name;
    let listenClientName: string | undefined;
    if (factoryOptions.withBlockingConnection)
      listenClientName = `${name}${workerName ? `:w:${workerName}` : ''}`;
    else if (factoryOptions.blocking) listenClientName = `${name}:qe`;
    if (listenClientName) store.pool.options.max += 1;
    return new PostgresQueueBackend(connection, name, opts, true, listenClientName);
  };
}
