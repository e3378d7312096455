import { randomUUID } from 'node:crypto';
import { connectRedis, redisTargetFromEnv } from '@switchyard/contracts';
import { type Job, Queue, Worker } from 'bullmq';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisJobFence } from '../../apps/tool-worker/src/execution/redis-job-fence.ts';
import { RedisReplicaWait } from '../../apps/tool-worker/src/execution/replica-wait.ts';
import type { Logger } from '../../apps/tool-worker/src/runtime/logger.ts';
import { SuiteContention } from '../support/contention.ts';
import { LocalRedisCluster } from '../support/redis-cluster.ts';

const quiet = { info: () => undefined, warn: () => undefined } as unknown as Logger;

/**
 * The replica wait on a Redis Cluster with one replica per primary: WAIT must run on the node that
 * holds the queue's slot, on the connection that wrote the marker (job-fence.ts pipelines it with the
 * fence script). Freezing exactly that node's replica makes the wait fail; a WAIT sent anywhere else
 * would have been answered by a replica that is not frozen and the call sent.
 */
describe('the replica wait on a Redis Cluster', () => {
  const cluster = new LocalRedisCluster();
  let redis: Cluster;
  let queue: Queue;
  let worker: Worker;
  let job: Job;
  let frozen: number | undefined;
  const prefix = `sy-test-cluster-wait-${randomUUID().slice(0, 8)}`;
  const token = 'token-a';
  const marker = { dispatchedBy: 'worker-a', dispatchedAt: 1 };

  const contention = new SuiteContention('cluster replica wait');

  beforeAll(async () => {
    await contention.start();
    await cluster.start(3, 1);
    redis = connectRedis(redisTargetFromEnv({ REDIS_CLUSTER_NODES: cluster.nodes }), 'fence-test') as Cluster;
    redis.on('error', () => undefined);
    await untilReplicasOnline(redis);
    queue = new Queue('tools.{fence}', { connection: redis, prefix });
    worker = new Worker('tools.{fence}', null, { connection: redis, prefix, lockDuration: 10_000 });
    await queue.add('call', { n: 1 }, { jobId: 'one' });
    job = (await worker.getNextJob(token)) as Job;
  });

  afterAll(async () => {
    await contention.stop();
    if (frozen) process.kill(frozen, 'SIGCONT');
    await worker?.close();
    await queue?.obliterate({ force: true });
    await queue?.close();
    await redis?.quit();
    await cluster.stop();
  });

  it("waits for the replica of the queue's own primary, and refuses when it does not answer", async () => {
    const keys = {
      jobKey: (id: string) => queue.toKey(id),
      active: queue.toKey('active'),
      stalled: queue.toKey('stalled'),
    };
    const wait = new RedisReplicaWait(redis, { replicas: 'auto', timeoutMs: 500 }, 10_000, 60_000, quiet);
    const fence = new RedisJobFence(redis, keys, 10_000, wait);
    const slot = (await redis.cluster('KEYSLOT', keys.active)) as number;
    const primary = redis.slots[slot]?.[0];
    const primaryNode = redis
      .nodes('master')
      .find((node) => `${node.options.host}:${node.options.port}` === primary);
    const replicaPort = /^slave0:.*\bport=(\d+)/m.exec((await primaryNode?.info('replication')) ?? '')?.[1];
    expect(await wait.required(primary)).toBe(1);
    expect(await fence.beforeSend(job, token, marker)).toBe('fenced');

    await fence.unmark(job, token);
    frozen = cluster.pids.get(Number(replicaPort));
    expect(frozen).toBeDefined();
    process.kill(frozen as number, 'SIGSTOP');
    expect(await fence.beforeSend(job, token, marker)).toEqual({
      unreplicated: { acked: 0, required: 1, timeoutMs: 500 },
    });
    expect(await redis.hget(queue.toKey('one'), 'progress')).toBe('{}');
    process.kill(frozen as number, 'SIGCONT');
    frozen = undefined;
  });
});

/** cluster create returns before the replicas finished their first sync: wait until each primary has one online. */
async function untilReplicasOnline(redis: Cluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (redis.status === 'ready') {
      const infos = await Promise.all(redis.nodes('master').map((node) => node.info('replication')));
      if (infos.length === 3 && infos.every((info) => /state=online/.test(info))) return;
    }
    if (Date.now() > deadline) throw new Error('cluster replicas not online after 60 s');
    // INFO has no blocking form; the first sync of an empty node takes a moment.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
