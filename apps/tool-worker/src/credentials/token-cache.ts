import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type RedisConnection, redisKeys } from '@switchyard/contracts';
import { z } from 'zod';

/** One team's access token for one server, as the fleet shares it in Redis. */
const CachedTokenSchema = z.object({
  accessToken: z.string().min(1),
  tokenType: z.string().default('Bearer'),
  /** Epoch ms after which the token is renewed before use (ahead of its expiry). */
  renewAt: z.number(),
  /** A rotated refresh token: the operator's configured one may no longer be valid. */
  refreshToken: z.string().optional(),
});
export type CachedToken = z.infer<typeof CachedTokenSchema>;

/** Tokens without an expires_in are still renewed this often (a 401 renews them sooner). */
const DEFAULT_LIFETIME_MS = 3_600_000;
/** Renewed when this share of its lifetime is left, so no call goes out with a token about to lapse. */
const RENEW_AHEAD_SHARE = 0.2;
/** The rotated refresh token outlives the access token in the cache by this much. */
const REFRESH_TOKEN_KEEP_MS = 30 * 24 * 3_600_000;

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

/** One worker of the fleet renews an identity's token at a time; the others wait this long at most. */
const RENEW_LOCK_MS = 15_000;
const RENEW_POLL_MS = 100;

export interface TokenKey {
  team: string;
  issuer: string;
  server: string;
}

/**
 * The fleet's OAuth token cache: Redis keys by (team, issuer, server) under the deployment prefix, so
 * every worker reuses a token another obtained, and one team's token is never found under another's key.
 * Values are never logged by this class or its callers.
 */
export class TokenCache {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  private key({ team, issuer, server }: TokenKey): string {
    return redisKeys.oauthToken(this.prefix, team, issuer, server);
  }

  async get(key: TokenKey): Promise<CachedToken | undefined> {
    const raw = await this.redis.get(this.key(key));
    if (!raw) return undefined;
    const parsed = CachedTokenSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }

  /** Stores a token response; `expiresInSeconds` from the authorization server decides when it is renewed. */
  async put(
    key: TokenKey,
    token: { accessToken: string; tokenType?: string; expiresInSeconds?: number; refreshToken?: string },
  ): Promise<CachedToken> {
    const lifetimeMs = (token.expiresInSeconds ?? DEFAULT_LIFETIME_MS / 1000) * 1000;
    const cached: CachedToken = {
      accessToken: token.accessToken,
      // RFC 6750 names the scheme "Bearer"; servers commonly answer "bearer".
      tokenType: token.tokenType?.toLowerCase() === 'bearer' || !token.tokenType ? 'Bearer' : token.tokenType,
      renewAt: Date.now() + lifetimeMs * (1 - RENEW_AHEAD_SHARE),
      ...(token.refreshToken ? { refreshToken: token.refreshToken } : {}),
    };
    const keepMs = token.refreshToken ? Math.max(lifetimeMs, REFRESH_TOKEN_KEEP_MS) : lifetimeMs;
    await this.redis.set(this.key(key), JSON.stringify(cached), 'PX', Math.max(1, Math.round(keepMs)));
    return cached;
  }

  /**
   * Renews under a fleet-wide lock, so one token request is made for the fleet, not one per worker, and a
   * rotating refresh token is never spent twice (an authorization server revokes the whole grant when a
   * spent one comes back). A worker that finds the lock taken waits for the other's token.
   */
  async renewOnce(
    key: TokenKey,
    renew: (refreshToken: string | undefined) => Promise<CachedToken>,
  ): Promise<CachedToken> {
    const lock = `${this.key(key)}:renewing`;
    const owner = randomUUID();
    const giveUpAt = Date.now() + RENEW_LOCK_MS;
    for (;;) {
      if (await this.redis.set(lock, owner, 'PX', RENEW_LOCK_MS, 'NX')) {
        try {
          // Another worker may have renewed between our read and taking the lock.
          const current = await this.get(key);
          if (current && current.renewAt > Date.now()) return current;
          return await renew(current?.refreshToken);
        } finally {
          await this.redis.eval(RELEASE_IF_OWNER, 1, lock, owner);
        }
      }
      await delay(RENEW_POLL_MS);
      const current = await this.get(key);
      if (current && current.renewAt > Date.now()) return current;
      if (Date.now() > giveUpAt) throw new Error('another worker is renewing the token and did not finish');
    }
  }

  /** Marks a token the server rejected for renewal, unless the entry already holds a newer one. */
  async reject(key: TokenKey, accessToken: string): Promise<void> {
    await this.redis.eval(EXPIRE_IF_TOKEN, 1, this.key(key), accessToken);
  }
}
