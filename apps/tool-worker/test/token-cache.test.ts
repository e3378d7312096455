import { randomUUID } from 'node:crypto';
import { redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { TokenCache } from '../src/credentials/token-cache.ts';

/** The fleet's token cache against real Redis: two caches stand for two workers. */
describe('token cache', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const other = redis.duplicate();
  const prefix = `sy-test-tokens-${randomUUID().slice(0, 8)}`;
  const [workerA, workerB] = [
    new TokenCache(redisStore(redis, prefix)),
    new TokenCache(redisStore(other, prefix)),
  ];
  const key = { team: 'team-a', issuer: 'https://auth.example.com', server: 'docs' };

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await other.quit();
    await redis.quit();
  });

  it('keys tokens by identity: another team finds nothing under its own key', async () => {
    await workerA.put(key, { accessToken: 'token-a', expiresInSeconds: 3600 });
    expect((await workerB.get(key))?.accessToken).toBe('token-a');
    expect(await workerB.get({ ...key, team: 'team-b' })).toBeUndefined();
    expect(await workerB.get({ ...key, issuer: 'https://other.example.com' })).toBeUndefined();
  });

  it('renews a token once for the fleet when two workers need it at the same time', async () => {
    let requests = 0;
    const renew = async () => {
      requests += 1;
      // A slow token endpoint: the other worker finds the lock taken and waits for this token.
      await new Promise((resolve) => setTimeout(resolve, 300));
      return workerA.put(key, { accessToken: `renewed-${requests}`, expiresInSeconds: 3600 });
    };
    await workerA.reject(key, 'token-a');
    const [first, second] = await Promise.all([workerA.renewOnce(key, renew), workerB.renewOnce(key, renew)]);
    expect(requests).toBe(1);
    expect(first.accessToken).toBe('renewed-1');
    expect(second.accessToken).toBe('renewed-1');
  });

  it('marks only the rejected token stale, and keeps a rotated refresh token', async () => {
    await workerA.put(key, { accessToken: 'current', refreshToken: 'rotated', expiresInSeconds: 3600 });
    await workerB.reject(key, 'an-older-token');
    expect((await workerA.get(key))?.renewAt).toBeGreaterThan(Date.now());
    await workerB.reject(key, 'current');
    const stale = await workerA.get(key);
    expect(stale?.renewAt).toBe(0);
    expect(stale?.refreshToken).toBe('rotated');
    let handed: string | undefined;
    await workerA.renewOnce(key, async (refreshToken) => {
      handed = refreshToken;
      return workerA.put(key, { accessToken: 'next', expiresInSeconds: 60 });
    });
    expect(handed).toBe('rotated');
  });

  it('renews ahead of expiry: a token is due once 80% of its lifetime has passed', async () => {
    const before = Date.now();
    const cached = await workerA.put(key, { accessToken: 'short', expiresInSeconds: 100 });
    expect(cached.renewAt).toBeGreaterThanOrEqual(before + 80_000);
    expect(cached.renewAt).toBeLessThanOrEqual(Date.now() + 80_000);
    expect(
      await redis.pttl(`${prefix}:oauth-token:team-a:${encodeURIComponent(key.issuer)}:docs`),
    ).toBeLessThanOrEqual(100_000);
  });
});
