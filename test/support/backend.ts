/**
 * Which queue store the suites' deployments run on: `SWITCHYARD_TEST_BACKEND=redis` (the default) or
 * `postgres` (vitest.postgres.config.ts sets it). On postgres every worker and orchestrator a suite
 * starts gets `SWITCHYARD_BACKEND=postgres` and the suite's DATABASE_URL, and no Redis variable.
 */
export type TestBackend = 'redis' | 'postgres';

function testBackend(value = process.env.SWITCHYARD_TEST_BACKEND?.trim()): TestBackend {
  if (!value || value === 'redis') return 'redis';
  if (value === 'postgres') return 'postgres';
  throw new Error(`SWITCHYARD_TEST_BACKEND: expected "redis" or "postgres", got "${value}"`);
}

export const TEST_BACKEND: TestBackend = testBackend();

/** The suites' PostgreSQL: the job store's, and on the postgres pass the queues' too. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The environment that points an app process at PostgreSQL alone. The Redis variables are removed
 * (undefined: child_process leaves them out), not just overridden, so no process inherits a REDIS_URL.
 */
export function postgresBackendEnv(databaseUrl = DATABASE_URL): Record<string, string | undefined> {
  return {
    SWITCHYARD_BACKEND: 'postgres',
    DATABASE_URL: databaseUrl,
    REDIS_URL: undefined,
    REDIS_CLUSTER_NODES: undefined,
    REDIS_SENTINELS: undefined,
  };
}

/** Probes that inspecting or awaiting an object makes (vitest's printer, `await`, JSON): answered, not thrown. */
const HARMLESS_PROBES = new Set(['then', 'toJSON', 'constructor', 'asymmetricMatch', '$$typeof', 'nodeType']);

/**
 * What a postgres-pass Fleet has for `fleet.redis`: no connection (none may be made), but an object
 * whose first use says which suite reached for Redis directly, so that suite is left out of
 * vitest.postgres.config.ts with its reason rather than failing with a connection error.
 */
export function absentRedis<T extends object>(owner: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      if (typeof property === 'symbol' || HARMLESS_PROBES.has(property)) return undefined;
      throw new Error(
        `${owner}: .redis.${property}() on the postgres pass (SWITCHYARD_TEST_BACKEND=postgres), which has no Redis: this suite reads Redis directly and belongs in vitest.postgres.config.ts's exclusions`,
      );
    },
  });
}
