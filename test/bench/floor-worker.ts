/**
 * The floor of any BullMQ design, as its own process: a BullMQ Worker whose processor does nothing.
 * Started by floor.ts with REDIS_URL / REDIS_CLUSTER_NODES, BENCH_PREFIX, BENCH_QUEUE, BENCH_CONCURRENCY and (optionally)
 * BENCH_GLOBAL_CONCURRENCY, which it sets on the queue before it starts consuming.
 */
import { connectRedis, redisTargetFromEnv } from '@switchyard/contracts';
import { Queue, Worker } from 'bullmq';

const prefix = required('BENCH_PREFIX');
const queueName = required('BENCH_QUEUE');
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? '1');
const globalConcurrency = process.env.BENCH_GLOBAL_CONCURRENCY;

// REDIS_URL, or a Redis Cluster when REDIS_CLUSTER_NODES is set: the same connection the apps make.
const connection = connectRedis(redisTargetFromEnv(), 'switchyard-bench-floor-worker');
const queue = new Queue(queueName, { connection, prefix });
if (globalConcurrency) await queue.setGlobalConcurrency(Number(globalConcurrency));
const worker = new Worker(queueName, async () => ({ ok: true }), { connection, prefix, concurrency });
worker.on('error', (error) => process.stderr.write(`floor worker error: ${error.message}\n`));
await worker.waitUntilReady();
process.stdout.write(`${JSON.stringify({ msg: 'floor worker ready', queue: queueName })}\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  Promise.all([worker.close(), queue.close()])
    .then(() => connection.quit())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
