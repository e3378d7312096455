import { randomUUID } from 'node:crypto';
import { type RedisConnection, redisKeys } from '@switchyard/contracts';
import type { TokenCacheStore, TokenKey } from './token-cache-store.ts';

/**
 * Marks the entry for renewal only if it still holds the rejected token (another worker may have renewed
 * it meanwhile); a rotated refresh token in it is kept.
 */
const EXPIRE_IF_TOKEN = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local token = cjson.decode(raw)
if token.accessToken ~= ARGV[1] then return 0 end
token.renewAt = 0
return redis.call('SET', KEYS[1], cjson.encode(token), 'KEEPTTL')`;

/** Releases the renewal lock only if this worker still holds it. */
const RELEASE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Redis keys by (team, issuer, server) under the deployment prefix (redisKeys.oauthToken), the entry's
 * TTL its keep time; the lease is `<key>:renewing`, SET NX PX.
 */
export class RedisTokenCacheStore implements TokenCacheStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  private key({ team, issuer, server, dpopKey }: TokenKey): string {
    return redisKeys.oauthToken(this.prefix, team, issuer, server, dpopKey);
  }

  async get(key: TokenKey): Promise<string | undefined> {
    return (await this.redis.get(this.key(key))) ?? undefined;
  }

  async put(key: TokenKey, value: string, keepMs: number): Promise<void> {
    await this.redis.set(this.key(key), value, 'PX', Math.max(1, Math.round(keepMs)));
  }

  async expireIfToken(key: TokenKey, accessToken: string): Promise<void> {
    await this.redis.eval(EXPIRE_IF_TOKEN, 1, this.key(key), accessToken);
  }

  async withRenewal<T>(
    key: TokenKey,
    leaseMs: number,
    renew: () => Promise<T>,
  ): Promise<{ held: true; value: T } | { held: false }> {
    const lock = `${this.key(key)}:renewing`;
    const owner = randomUUID();
    if (!(await this.redis.set(lock, owner, 'PX', leaseMs, 'NX'))) return { held: false };
    try {
      return { held: true, value: await renew() };
    } finally {
      await this.redis.eval(RELEASE_IF_OWNER, 1, lock, owner);
    }
  }
}
