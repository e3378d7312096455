import { setTimeout as delay } from 'node:timers/promises';
import type { Store } from '@switchyard/contracts';
import { z } from 'zod';
import { type TokenCacheStore, type TokenKey, tokenCacheStore } from './token-cache-store.ts';

export type { TokenKey } from './token-cache-store.ts';

/** One team's access token for one server, as the fleet shares it in the store. */
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

/** One worker of the fleet renews an identity's token at a time; the others wait this long at most. */
const RENEW_LOCK_MS = 15_000;
const RENEW_POLL_MS = 100;

/**
 * The fleet's OAuth token cache, kept in the deployment's store by (team, issuer, server)
 * (token-cache-store.ts), so every worker reuses a token another obtained, and one team's token is never
 * found under another's key. Values are never logged by this class or its callers.
 */
export class TokenCache {
  private readonly entries: TokenCacheStore;

  constructor(store: Store) {
    this.entries = tokenCacheStore(store);
  }

  async get(key: TokenKey): Promise<CachedToken | undefined> {
    const raw = await this.entries.get(key);
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
    await this.entries.put(key, JSON.stringify(cached), keepMs);
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
    const giveUpAt = Date.now() + RENEW_LOCK_MS;
    for (;;) {
      const renewal = await this.entries.withRenewal(key, RENEW_LOCK_MS, async () => {
        // Another worker may have renewed between our read and taking the lock.
        const current = await this.get(key);
        if (current && current.renewAt > Date.now()) return current;
        return renew(current?.refreshToken);
      });
      if (renewal.held) return renewal.value;
      await delay(RENEW_POLL_MS);
      const current = await this.get(key);
      if (current && current.renewAt > Date.now()) return current;
      if (Date.now() > giveUpAt) throw new Error('another worker is renewing the token and did not finish');
    }
  }

  /** Marks a token the server rejected for renewal, unless the entry already holds a newer one. */
  async reject(key: TokenKey, accessToken: string): Promise<void> {
    await this.entries.expireIfToken(key, accessToken);
  }
}
