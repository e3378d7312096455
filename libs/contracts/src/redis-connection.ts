import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ConfigError } from './env-expansion.ts';

/**
 * The deployment's Redis: one server (`REDIS_URL`) or a Redis Cluster (`REDIS_CLUSTER_NODES`, a
 * comma-separated list of `host:port` seeds; credentials and TLS then come from `REDIS_URL` when set).
 * Every key Switchyard and BullMQ touch together carries one hash tag (docs/operations.md), so both
 * work the same on either.
 */
export type RedisConnection = Redis | Cluster;

export interface RedisTarget {
  url: string;
  /** Seeds of a Redis Cluster; absent for a single server. */
  clusterNodes?: Array<{ host: string; port: number }>;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisTargetFromEnv(env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const url = env.REDIS_URL || DEFAULT_REDIS_URL;
  try {
    new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL', `not a URL: ${url}`);
  }
  const seeds = env.REDIS_CLUSTER_NODES?.trim();
  if (!seeds) return { url };
  const clusterNodes = seeds.split(',').map((seed) => {
    const match = /^\s*([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\s*$/.exec(seed);
    const port = Number(match?.[2]);
    if (!match?.[1] || port < 1 || port > 65535) {
      throw new ConfigError('REDIS_CLUSTER_NODES', `expected host:port[,host:port…], got "${seed}"`);
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
  return { url, clusterNodes };
}

/** Credentials and TLS of REDIS_URL, for the nodes of a cluster. */
function nodeOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * A command connection. `maxRetriesPerRequest: null` because BullMQ workers must never drop a
 * command on a Redis hiccup; commands wait for the connection instead.
 */
export function connectRedis(target: RedisTarget, connectionName: string): RedisConnection {
  const options: RedisOptions = { maxRetriesPerRequest: null, connectionName };
  if (!target.clusterNodes) return new Redis(target.url, options);
  return new Cluster(target.clusterNodes, {
    redisOptions: { ...nodeOptions(target.url), ...options },
    // Only primaries: a read from a replica could miss a write made a moment ago (a job's lock).
    scaleReads: 'master',
  });
}

/** Another connection to the same Redis (a subscriber, a blocking reader), named for CLIENT LIST. */
export function duplicateRedis(connection: RedisConnection, connectionName: string): RedisConnection {
  if (connection instanceof Cluster) {
    return connection.duplicate([], {
      redisOptions: { ...connection.options.redisOptions, connectionName },
    });
  }
  return connection.duplicate({ connectionName });
}

/** The primaries to visit for commands that see one node only (SCAN, INFO). */
export function primaries(connection: RedisConnection): Redis[] {
  return connection instanceof Cluster ? connection.nodes('master') : [connection];
}
