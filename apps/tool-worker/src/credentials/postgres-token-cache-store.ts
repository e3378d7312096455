import { randomUUID } from 'node:crypto';
import { POSTGRES_NOW_MS } from '@switchyard/contracts';
import type pg from 'pg';
import type { TokenCacheStore, TokenKey } from './token-cache-store.ts';

/** $1 key. An entry past its keep time reads as absent, whether or not a sweep deleted it yet. */
export const GET_TOKEN_SQL = `SELECT value FROM oauth_token WHERE key = $1 AND expires_at_ms > ${POSTGRES_NOW_MS}`;

/** $1 key, $2 value, $3 keep (ms). */
export const PUT_TOKEN_SQL = `
INSERT INTO oauth_token (key, value, expires_at_ms) VALUES ($1, $2, ${POSTGRES_NOW_MS} + $3::bigint)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at_ms = EXCLUDED.expires_at_ms`;

/** $1 key, $2 the rejected access token. The keep time is left as it is (Redis: KEEPTTL). */
export const EXPIRE_IF_TOKEN_SQL = `
UPDATE oauth_token
   SET value = jsonb_set(value::jsonb, '{renewAt}', '0')::text
 WHERE key = $1 AND expires_at_ms > ${POSTGRES_NOW_MS} AND value::jsonb ->> 'accessToken' = $2`;

/**
 * Takes the identity's renewal lease when it is free or its holder's has run out (a renewer that died
 * holds it no longer than that): a row comes back only to the one that took it. A lease row, not an
 * advisory lock: a session lock would pin a pooled connection for the renewal's HTTP round trip, and a
 * transaction-scoped one cannot span it. $1 key, $2 owner, $3 lease (ms).
 */
export const TAKE_RENEW_LEASE_SQL = `
INSERT INTO renew_lock AS lease (key, owner, expires_at_ms) VALUES ($1, $2, ${POSTGRES_NOW_MS} + $3::bigint)
ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at_ms = EXCLUDED.expires_at_ms
 WHERE lease.expires_at_ms <= ${POSTGRES_NOW_MS}
RETURNING owner`;

/** $1 key, $2 owner: a lease that ran out and was taken by another is not ours to release. */
export const RELEASE_RENEW_LEASE_SQL = `DELETE FROM renew_lock WHERE key = $1 AND owner = $2`;

/** Rows of oauth_token and renew_lock keyed by the identity (team, issuer, server). */
export class PostgresTokenCacheStore implements TokenCacheStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The identity as one unambiguous text: none of its parts can end another. */
  private key({ team, issuer, server, dpopKey }: TokenKey): string {
    return JSON.stringify(dpopKey ? [team, issuer, server, dpopKey] : [team, issuer, server]);
  }

  async get(key: TokenKey): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value: string }>(GET_TOKEN_SQL, [this.key(key)]);
    return rows[0]?.value;
  }

  async put(key: TokenKey, value: string, keepMs: number): Promise<void> {
    await this.pool.query(PUT_TOKEN_SQL, [this.key(key), value, Math.max(1, Math.round(keepMs))]);
  }

  async expireIfToken(key: TokenKey, accessToken: string): Promise<void> {
    await this.pool.query(EXPIRE_IF_TOKEN_SQL, [this.key(key), accessToken]);
  }

  async withRenewal<T>(
    key: TokenKey,
    leaseMs: number,
    renew: () => Promise<T>,
  ): Promise<{ held: true; value: T } | { held: false }> {
    const id = this.key(key);
    const owner = randomUUID();
    const taken = await this.pool.query(TAKE_RENEW_LEASE_SQL, [id, owner, Math.max(1, Math.round(leaseMs))]);
    if (taken.rowCount !== 1) return { held: false };
    try {
      return { held: true, value: await renew() };
    } finally {
      await this.pool.query(RELEASE_RENEW_LEASE_SQL, [id, owner]);
    }
  }
}
