import type { LockedQueue, Store } from '@switchyard/contracts';

/**
 * The lock watchdog's probe (lock-watchdog.ts) on this store: one cheap round trip on the route the lock
 * renewals take. Redis: a keyed read of the queue's meta hash on the shared connection (on a Cluster it
 * reaches the node that holds the queue's slot, and so its locks). PostgreSQL: `SELECT 1` on the store's
 * pool, which shares the renewals' route to the database; an error PostgreSQL sent is an answer too.
 */
export function lockWatchdogProbe(store: Store, queue: LockedQueue): () => Promise<unknown> {
  if (store.kind === 'redis') {
    const { redis } = store;
    const meta = queue.toKey('meta');
    return () => redis.exists(meta);
  }
  const { pool } = store;
  return () =>
    pool.query('SELECT 1').catch((error: unknown) => {
      if (isServerError(error)) return undefined;
      throw error;
    });
}

/**
 * node-postgres's DatabaseError (an ErrorResponse from the server) carries the server's severity and
 * SQLSTATE; a client-side failure (connection refused, reset, pool ended) carries neither.
 */
function isServerError(error: unknown): boolean {
  return (
    error instanceof Error && 'severity' in error && typeof (error as { code?: unknown }).code === 'string'
  );
}
