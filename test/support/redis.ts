import { randomUUID } from 'node:crypto';
import { connectRedis, primaries, type RedisConnection, redisTargetFromEnv } from '@switchyard/contracts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The suites run against the machine's Redis, or against a Redis Cluster when REDIS_CLUSTER_NODES is
 * set (`npm run test:cluster` starts one). Apps started by the suites inherit the same variables.
 */
export const REDIS_CLUSTER_NODES = process.env.REDIS_CLUSTER_NODES ?? '';

/** A BullMQ prefix no other run shares, so parallel or leftover runs never see each other's jobs. */
export function uniquePrefix(label: string): string {
  return `sy-test-${label}-${randomUUID().slice(0, 8)}`;
}

/** The cluster seeds that go with `url`: the suite's cluster for the default Redis, none for a Redis of its own. */
export function defaultClusterNodes(url: string): string {
  return url === REDIS_URL ? REDIS_CLUSTER_NODES : '';
}

/**
 * A connection to `url`, or to the suite's cluster when `url` is the default Redis and a cluster was
 * given. A suite's own dedicated Redis (a URL of its own) is a single server unless `clusterNodes`
 * names a cluster of its own (the bench runs one next to the machine's Redis).
 */
export function connect(
  name = 'switchyard-test',
  url = REDIS_URL,
  clusterNodes = defaultClusterNodes(url),
  /** Sentinel seeds (`host:port,…`, group `mymaster`): the primary they name instead of `url`'s host. */
  sentinels = '',
): RedisConnection {
  const redis = connectRedis(
    redisTargetFromEnv({ REDIS_URL: url, REDIS_CLUSTER_NODES: clusterNodes, REDIS_SENTINELS: sentinels }),
    name,
  );
  // Tests that restart Redis expect reconnects; ioredis retries on its own.
  redis.on('error', () => undefined);
  return redis;
}

/** The environment that points an app process at `url` (and at the cluster, for the default Redis). */
export function redisEnv(
  url: string,
  clusterNodes = defaultClusterNodes(url),
  sentinels = '',
): Record<string, string> {
  return { REDIS_URL: url, REDIS_CLUSTER_NODES: clusterNodes, REDIS_SENTINELS: sentinels };
}

/** Deletes every key of a test prefix, on every primary. */
export async function dropPrefix(redis: RedisConnection, prefix: string): Promise<void> {
  for (const node of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      // One UNLINK per key: keys of different slots cannot share a command on a cluster.
      await Promise.all(keys.map((key) => node.unlink(key)));
    } while (cursor !== '0');
  }
}
