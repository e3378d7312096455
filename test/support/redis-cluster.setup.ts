import { LocalRedisCluster } from './redis-cluster.ts';

/**
 * vitest globalSetup of the cluster run: one local 3-primary Redis Cluster for the whole run. Set
 * before the test workers exist, REDIS_CLUSTER_NODES reaches every suite and every app it starts.
 */
export default async function startRedisCluster(): Promise<() => Promise<void>> {
  const cluster = new LocalRedisCluster();
  try {
    await cluster.start();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  process.env.REDIS_CLUSTER_NODES = cluster.nodes;
  console.log(`redis cluster: 3 primaries at ${cluster.nodes}`);
  return () => cluster.stop();
}
