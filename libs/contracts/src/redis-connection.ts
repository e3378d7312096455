import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ConfigError } from './env-expansion.ts';

/**
 * The deployment's Redis: one server (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`, a
 * comma-separated list of `host:port` seeds; credentials and TLS then come from `REDIS_URL` when set), or
 * the primary of a Sentinel-watched group (`REDIS_SENTINELS` seeds, `REDIS_SENTINEL_NAME`; credentials,
 * database and TLS again from `REDIS_URL`).
 * Every key Switchyard and BullMQ touch together carries one hash tag (docs/operations.md), so both
 * work the same on either.
 */
export type RedisConnection = Redis | Cluster;

export interface RedisTarget {
  url: string;
  /** Seeds of a Redis Cluster; absent for a single server. */
  clusterNodes?: Array<{ host: string; port: number }>;
  /**
   * Redis Sentinel (`REDIS_SENTINELS`): seeds of the sentinels and the master group they watch. ioredis
   * asks them for the current primary on every (re)connect, so the apps follow a failover by themselves.
   */
  sentinel?: { sentinels: Array<{ host: string; port: number }>; name: string };
}

/** `mymaster` is what Redis's own sentinel.conf example (and most charts) call the group. */
export const DEFAULT_SENTINEL_NAME = 'mymaster';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisTargetFromEnv(env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const url = env.REDIS_URL || DEFAULT_REDIS_URL;
  try {
    new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL', `not a URL: ${url}`);
  }
  const seeds = env.REDIS_CLUSTER_NODES?.trim();
  const sentinelSeeds = env.REDIS_SENTINELS?.trim();
  if (seeds && sentinelSeeds) {
    throw new ConfigError(
      'REDIS_SENTINELS',
      'set either REDIS_SENTINELS (Sentinel) or REDIS_CLUSTER_NODES (Redis Cluster), not both',
    );
  }
  if (sentinelSeeds) {
    const name = env.REDIS_SENTINEL_NAME?.trim() || DEFAULT_SENTINEL_NAME;
    if (/\s/.test(name)) {
      throw new ConfigError('REDIS_SENTINEL_NAME', `a master group name has no spaces, got "${name}"`);
    }
    return { url, sentinel: { sentinels: parseSeeds(sentinelSeeds, 'REDIS_SENTINELS'), name } };
  }
  if (env.REDIS_SENTINEL_NAME?.trim()) {
    throw new ConfigError('REDIS_SENTINEL_NAME', 'set without REDIS_SENTINELS (the sentinels to ask)');
  }
  if (!seeds) return { url };
  return { url, clusterNodes: parseSeeds(seeds, 'REDIS_CLUSTER_NODES') };
}

/** `host:port[,host:port…]` (IPv6 in brackets); a bad seed is a config error naming `key`. */
function parseSeeds(seeds: string, key: string): Array<{ host: string; port: number }> {
  return seeds.split(',').map((seed) => {
    const match = /^\s*([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\s*$/.exec(seed);
    const port = Number(match?.[2]);
    if (!match?.[1] || port < 1 || port > 65535) {
      throw new ConfigError(key, `expected host:port[,host:port…], got "${seed}"`);
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
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
 * The options of a connection through Sentinel: the primary's credentials, database and TLS from
 * REDIS_URL (its host is not used), the sentinels from REDIS_SENTINELS, reached with the same TLS and
 * without credentials (REDIS_URL's password is the data nodes', not necessarily the sentinels').
 */
function sentinelOptions(url: string, sentinel: NonNullable<RedisTarget['sentinel']>): RedisOptions {
  const tls = new URL(url).protocol === 'rediss:';
  const db = Number(new URL(url).pathname.slice(1) || 0);
  return {
    ...nodeOptions(url),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    // Only the primary: the fence and the job locks must be read where they were written.
    role: 'master',
    // Subscribes to the sentinels' +switch-master: a primary that is still reachable after a failover
    // (a partition, a manual SENTINEL FAILOVER) is left at once instead of when it starts refusing writes.
    failoverDetector: true,
    ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // A demoted primary answers writes with READONLY: reconnect (asking the sentinels again) and resend.
    // Nothing ran, so resending is safe even for the fence script.
    reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
  };
}

/**
 * A command connection. `maxRetriesPerRequest: null` because BullMQ workers must never drop a
 * command on a Redis hiccup; commands wait for the connection instead.
 */
export function connectRedis(target: RedisTarget, connectionName: string): RedisConnection {
  const options: RedisOptions = { maxRetriesPerRequest: null, connectionName };
  if (target.sentinel) return new Redis({ ...sentinelOptions(target.url, target.sentinel), ...options });
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
