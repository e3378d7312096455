import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError, connectRedis, duplicateRedis, redisTargetFromEnv } from '../src/index.ts';

describe('redisTargetFromEnv', () => {
  it('is the single server of REDIS_URL unless cluster seeds are given', () => {
    expect(redisTargetFromEnv({})).toEqual({ url: 'redis://127.0.0.1:6379' });
    expect(redisTargetFromEnv({ REDIS_URL: 'redis://cache:6380' })).toEqual({ url: 'redis://cache:6380' });
    expect(
      redisTargetFromEnv({ REDIS_URL: 'rediss://u:p@x', REDIS_CLUSTER_NODES: 'a:7000, b:7001,[::1]:7002' }),
    ).toEqual({
      url: 'rediss://u:p@x',
      clusterNodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  it('names the variable of a bad value', () => {
    expect(() => redisTargetFromEnv({ REDIS_CLUSTER_NODES: 'a:7000,b' })).toThrow(ConfigError);
    expect(() => redisTargetFromEnv({ REDIS_CLUSTER_NODES: 'a:70000' })).toThrow(
      /REDIS_CLUSTER_NODES: .*"a:70000"/,
    );
    expect(() => redisTargetFromEnv({ REDIS_URL: 'not a url' })).toThrow(/REDIS_URL: not a URL/);
  });

  it('connects a Cluster for seeds, with credentials from REDIS_URL, and duplicates it as a Cluster', () => {
    const cluster = connectRedis(
      redisTargetFromEnv({ REDIS_URL: 'redis://user:secret@x', REDIS_CLUSTER_NODES: '127.0.0.1:1' }),
      'named',
    );
    try {
      expect(cluster).toBeInstanceOf(Cluster);
      const options = (cluster as Cluster).options.redisOptions;
      expect(options).toMatchObject({ username: 'user', password: 'secret', connectionName: 'named' });
      const copy = duplicateRedis(cluster, 'copy');
      expect(copy).toBeInstanceOf(Cluster);
      expect((copy as Cluster).options.redisOptions?.connectionName).toBe('copy');
      copy.disconnect();
    } finally {
      cluster.disconnect();
    }
    const single = connectRedis({ url: 'redis://127.0.0.1:1' }, 'one');
    expect(single).toBeInstanceOf(Redis);
    single.disconnect();
  });
});
