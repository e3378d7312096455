import type { Store } from '../store/store.ts';
import type { CatalogStore } from './catalog-store.ts';
import { PostgresCatalogStore } from './postgres-catalog-store.ts';
import { RedisCatalogStore } from './redis-catalog-store.ts';

/** The CatalogStore of the deployment's store: the one place the backend is chosen for this concern. */
export function catalogStoreOf(store: Store): CatalogStore {
  if (store.kind === 'redis') return new RedisCatalogStore(store.redis, store.prefix);
  if (store.kind === 'postgres') return new PostgresCatalogStore(store);
  // A caller from before the store (a bare Redis connection) would otherwise fail at its first read.
  throw new TypeError(
    `the catalog needs a Store (openStore, or redisStore(redis, prefix)), got ${(store as object)?.constructor?.name}`,
  );
}
