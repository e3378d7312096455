/**
 * The database's clock in whole epoch ms, as an SQL expression: every replica and worker stamps and
 * judges expiry on this one clock, as Redis's TTLs are judged on Redis's. clock_timestamp(), not now():
 * now() is the transaction's start, stale inside a long one.
 */
export const POSTGRES_NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint';
