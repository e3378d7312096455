import {
  type CatalogStore,
  catalogStoreOf,
  type RedisConnection,
  redisStore,
  type Store,
} from '@switchyard/contracts';
import { TEST_BACKEND } from './backend.ts';

/**
 * On the postgres pass a suite's `fleet.redis` is no connection: the queue store of each fleet, by
 * prefix, is what `untilAnnounced` listens on instead (registered by Fleet, opened when first needed).
 */
const postgresStores = new Map<string, () => Promise<Store>>();

export function registerQueueStore(prefix: string, open: () => Promise<Store>): void {
  postgresStores.set(prefix, open);
}

export function forgetQueueStore(prefix: string): void {
  postgresStores.delete(prefix);
}

/**
 * A check is also re-evaluated this often: on PostgreSQL a heartbeat announces only a change of its
 * session states (docs/postgres-backend.md §2), and what the check asks (an orchestrator's cached view)
 * may catch up a moment after the wake-up.
 */
const RECHECK_MS = 1_000;

/** The catalog of `prefix`'s deployment: through `redis` on the redis pass, the fleet's store on postgres. */
export async function catalogOf(redis: RedisConnection, prefix: string): Promise<CatalogStore> {
  if (TEST_BACKEND === 'redis') return catalogStoreOf(redisStore(redis, prefix));
  const open = postgresStores.get(prefix);
  if (!open)
    throw new Error(`no fleet with prefix ${prefix} on the postgres pass (its queue store is unknown)`);
  return catalogStoreOf(await open());
}

/**
 * Resolves once `check` is true, evaluated now and again on every catalog-changed announcement
 * (workers announce their tool lists and heartbeats): waiting on the fleet's own events, not on a clock.
 */
export async function untilAnnounced(
  redis: RedisConnection,
  prefix: string,
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const catalog = await catalogOf(redis, prefix);
  let stopListening: (() => Promise<void>) | undefined;
  let recheck: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`not within ${timeoutMs} ms: ${what}`)), timeoutMs);
      let settled = false;
      const evaluate = () =>
        void check().then((done) => {
          if (!done || settled) return;
          settled = true;
          resolve();
        }, reject);
      // Subscribed before the first check, so a change between the two is not missed.
      catalog.onChanged(evaluate).then((stop) => {
        if (finished) return void stop();
        stopListening = stop;
        evaluate();
        recheck = setInterval(evaluate, RECHECK_MS);
      }, reject);
    });
  } finally {
    finished = true;
    clearTimeout(timer);
    clearInterval(recheck);
    await stopListening?.();
  }
}
