/** Injection tokens for values (not classes); classes are injected by their own token with @Inject(Class). */
export const CONFIG = Symbol('SwitchyardConfig');
export const ENV = Symbol('OrchestratorEnv');
export const LOGGER = Symbol('Logger');
/**
 * The Redis command connection on the redis backend; `null` on postgres, where no Redis client exists.
 * Concerns with a PostgreSQL side take STORE instead.
 */
export const REDIS = Symbol('Redis');
/** The deployment's queue store (`@switchyard/contracts` store.ts): Redis or PostgreSQL. */
export const STORE = Symbol('Store');
export const PG_POOL = Symbol('PgPool');
