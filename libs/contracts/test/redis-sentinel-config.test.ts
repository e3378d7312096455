import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ConfigError, connectRedis, duplicateRedis, parseConfig, redisTargetFromEnv } from '../src/index.ts';

describe('Redis Sentinel settings', () => {
  it('reads the sentinels and the master group, mymaster by default', () => {
    expect(redisTargetFromEnv({ REDIS_SENTINELS: 's1:26379, [::1]:26380' })).toEqual({
      url: 'redis://127.0.0.1:6379',
      sentinel: {
        sentinels: [
          { host: 's1', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
      },
    });
    expect(
      redisTargetFromEnv({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'queues' }).sentinel?.name,
    ).toBe('queues');
  });

  it('names the variable of a bad value', () => {
    const failure = (env: NodeJS.ProcessEnv) => {
      try {
        redisTargetFromEnv(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('no config error');
    };
    expect(failure({ REDIS_SENTINELS: 's1:26379,s2' })).toMatch(/^REDIS_SENTINELS: .*"s2"/);
    expect(failure({ REDIS_SENTINELS: 's1:0' })).toMatch(/^REDIS_SENTINELS: /);
    expect(failure({ REDIS_SENTINELS: 's1:26379', REDIS_CLUSTER_NODES: 'a:7000' })).toMatch(
      /^REDIS_SENTINELS: set either/,
    );
    expect(failure({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_NAME: 'my master' })).toMatch(
      /^REDIS_SENTINEL_NAME: /,
    );
    expect(failure({ REDIS_SENTINEL_NAME: 'queues' })).toMatch(/^REDIS_SENTINEL_NAME: set without/);
  });

  it('connects through the sentinels to the primary only, with credentials, database and TLS from REDIS_URL', () => {
    const redis = connectRedis(
      redisTargetFromEnv({ REDIS_URL: 'rediss://user:secret@ignored:1/2', REDIS_SENTINELS: '127.0.0.1:1' }),
      'named',
    );
    try {
      expect(redis).toBeInstanceOf(Redis);
      expect((redis as Redis).options).toMatchObject({
        sentinels: [{ host: '127.0.0.1', port: 1 }],
        name: 'mymaster',
        role: 'master',
        failoverDetector: true,
        username: 'user',
        password: 'secret',
        db: 2,
        tls: {},
        enableTLSForSentinelMode: true,
        connectionName: 'named',
        maxRetriesPerRequest: null,
      });
      // A demoted primary refusing a write: reconnect through the sentinels and resend.
      const reconnect = (redis as Redis).options.reconnectOnError;
      expect(reconnect?.(new Error("READONLY You can't write against a read only replica."))).toBe(2);
      expect(reconnect?.(new Error('ERR other'))).toBe(false);
      const copy = duplicateRedis(redis, 'copy');
      expect((copy as Redis).options).toMatchObject({ name: 'mymaster', connectionName: 'copy' });
      copy.disconnect();
    } finally {
      redis.disconnect();
    }
  });
});

describe('worker.replicaWait', () => {
  const servers = { docs: { command: 'node' } };

  it('waits for every connected replica by default, for 1 s', () => {
    expect(parseConfig({ servers }).worker.replicaWait).toEqual({ replicas: 'auto', timeoutMs: 1_000 });
    expect(parseConfig({ servers, worker: { heartbeatMs: 500 } }).worker.replicaWait).toEqual({
      replicas: 'auto',
      timeoutMs: 1_000,
    });
  });

  it('takes a replica count (0: off) and refuses anything else, naming the key', () => {
    expect(parseConfig({ servers, worker: { replicaWait: { replicas: 0 } } }).worker.replicaWait).toEqual({
      replicas: 0,
      timeoutMs: 1_000,
    });
    expect(() => parseConfig({ servers, worker: { replicaWait: { replicas: 'all' } } })).toThrow(
      /worker\.replicaWait\.replicas/,
    );
    expect(() => parseConfig({ servers, worker: { replicaWait: { timeoutMs: 0 } } })).toThrow(
      /worker\.replicaWait\.timeoutMs/,
    );
  });
});
