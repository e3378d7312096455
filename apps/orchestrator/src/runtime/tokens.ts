/** Injection tokens for values (not classes); classes are injected by their own token with @Inject(Class). */
export const CONFIG = Symbol('SwitchyardConfig');
export const ENV = Symbol('OrchestratorEnv');
export const LOGGER = Symbol('Logger');
export const REDIS = Symbol('Redis');
export const PG_POOL = Symbol('PgPool');
