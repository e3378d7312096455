/**
 * The floor of any BullMQ design, as its own process: a BullMQ Worker whose processor does nothing.
 * Started by floor.ts with REDIS_URL / REDIS_CLUSTER_NODES, BENCH_PREFIX, BENCH_QUEUE, BENCH_CONCURRENCY and (optionally)
 * BENCH_GLOBAL_CONCURRENCY, which it sets on the queue before it starts consuming. With BENCH_DATABASE_URL and
 * BENCH_SCHEMA it runs on BullMQ's PostgreSQL backend instead (the PostgreSQL floor).
 */
import { connectRedis, redisTargetFromEnv } from '@switchyard/contracts';
import { createPostgresBackend, Queue, Worker } from 'bullmq';

const prefix = required('BENCH_PREFIX');
const queueName = required('BENCH_QUEUE');
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? '1');
const globalConcurrency = process.env.BENCH_GLOBAL_CONCURRENCY;

const databaseUrl = process.env.BENCH_DATABASE_URL;
const noop = async () => ({ ok: true });

// BENCH_DATABASE_URL (+ BENCH_SCHEMA): BullMQ's PostgreSQL backend, no Redis. Otherwise REDIS_URL, or a
// Redis Cluster when REDIS_CLUSTER_NODES is set: the same connection the apps make.
const pgConnection = databaseUrl
  ? { connectionString: databaseUrl, schema: required('BENCH_SCHEMA'), migrate: true, max: 4 }
  : undefined;
const connection = pgConnection
  ? undefined
  : connectRedis(redisTargetFromEnv(), 'switchyard-bench-floor-worker');
const queue = pgConnection
  ? new Queue(queueName, { connection: pgConnection }, createPostgresBackend)
  : new Queue(queueName, { connection: connection as NonNullable<typeof connection>, prefix });
if (globalConcurrency) await queue.setGlobalConcurrency(Number(globalConcurrency));
const worker = pgConnection
  ? new Worker(queueName, noop, { connection: pgConnection, concurrency }, createPostgresBackend)
  : new Worker(queueName, noop, {
      connection: connection as NonNullable<typeof connection>,
      prefix,
      concurrency,
    });
worker.on('error', (error) => process.stderr.write(`floor worker error: ${error.message}\n`));
await worker.waitUntilReady();
process.stdout.write(`${JSON.stringify({ msg: 'floor worker ready', queue: queueName })}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  Promise.all([worker.close(), queue.close()])
    .then(() => connection?.quit())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
