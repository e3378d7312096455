import type { Store } from '@switchyard/contracts';
import { PostgresTokenCacheStore } from './postgres-token-cache-store.ts';
import { RedisTokenCacheStore } from './redis-token-cache-store.ts';

/** Whose token: a team (or the worker's session identity), the issuer that granted it, the server it is for. */
export interface TokenKey {
  team: string;
  issuer: string;
  server: string;
  /**
   * A DPoP-bound token (RFC 9449): the thumbprint of the key it is bound to. That key lives in one
   * worker's memory, so such a token is that worker's alone, not the fleet's.
   */
  dpopKey?: string;
}

/**
 * Where the fleet keeps its OAuth tokens (token-cache.ts says what is in them): one entry per identity,
 * present until its keep time is over, and a fleet-wide lease so one worker at a time renews an identity.
 * Entries are JSON text to this port; it reads only their `accessToken` and sets only their `renewAt`.
 */
export interface TokenCacheStore {
  /** The entry, unless there is none or its keep time is over. */
  get(key: TokenKey): Promise<string | undefined>;
  /** Replaces the entry; it is kept `keepMs` from now on the store's clock. */
  put(key: TokenKey, value: string, keepMs: number): Promise<void>;
  /** Sets `renewAt` to 0 if the entry still holds `accessToken` (another worker may have renewed it). */
  expireIfToken(key: TokenKey, accessToken: string): Promise<void>;
  /**
   * Runs `renew` under the identity's renewal lease (held at most `leaseMs`, released after it, by this
   * holder only): `{ held: false }` without running it when another holder's lease is live.
   */
  withRenewal<T>(
    key: TokenKey,
    leaseMs: number,
    renew: () => Promise<T>,
  ): Promise<{ held: true; value: T } | { held: false }>;
}

export function tokenCacheStore(store: Store): TokenCacheStore {
  return store.kind === 'redis'
    ? new RedisTokenCacheStore(store.redis, store.prefix)
    : new PostgresTokenCacheStore(store.pool);
}
