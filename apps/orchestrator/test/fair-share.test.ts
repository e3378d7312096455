import { randomUUID } from 'node:crypto';
import { parseConfig, redisKeys, redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FairShare } from '../src/dispatch/fair-share.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `sy-test-fair-${randomUUID().slice(0, 8)}`;
const config = parseConfig({
  servers: { shared: { command: 'true' }, plain: { command: 'true', fairness: 'fifo' } },
  teams: {
    big: { apiKeys: ['big-key-000000000000001'], weight: 2 },
    small: { apiKeys: ['small-key-00000000000001'] },
  },
});
const fair = new FairShare(redisStore(redis, prefix), config);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('FairShare', () => {
  const later = () => Date.now() + 60_000;

  it('gives each call its place in its own team’s line, divided by the team’s weight', async () => {
    const small = [];
    for (let index = 0; index < 3; index++)
      small.push(await fair.enter('shared', 'small', `s${index}`, later()));
    const big = [];
    for (let index = 0; index < 4; index++) big.push(await fair.enter('shared', 'big', `b${index}`, later()));
    expect(small).toEqual([1, 2, 3]);
    expect(big).toEqual([1, 1, 2, 2]);
  });

  it('counts a call once however often it is dispatched, and forgets it when it settles', async () => {
    // s0…s2 are in line: a second dispatch of s0 does not make it four.
    expect(await fair.enter('shared', 'small', 's0', later())).toBe(3);
    await fair.leave('shared', 'small', 's0');
    await fair.leave('shared', 'small', 's0');
    expect(await redis.zcard(redisKeys.teamLine(prefix, 'shared', 'small'))).toBe(2);
  });

  it('drops calls past their start deadline, which have started or expired by then', async () => {
    await fair.enter('shared', 'late', 'old', Date.now() - 1);
    expect(await fair.enter('shared', 'late', 'new', later())).toBe(1);
  });

  it('leaves a fifo server’s calls without a priority and its keys untouched', async () => {
    expect(await fair.enter('plain', 'small', 'p1', later())).toBeUndefined();
    expect(await redis.exists(redisKeys.teamLine(prefix, 'plain', 'small'))).toBe(0);
  });
});
