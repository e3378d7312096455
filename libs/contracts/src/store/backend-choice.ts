import { ConfigError } from '../env-expansion.ts';

/** Where a deployment keeps its queues and their state (docs/configuration.md, "Backend"). */
export type BackendKind = 'redis' | 'postgres';

export interface BackendChoice {
  backend: BackendKind;
  /** Why this backend, for the start-up log line and `/health/ready`. */
  reason: string;
}

/**
 * `SWITCHYARD_BACKEND` wins, then the config's `backend`; unset, `postgres` when `DATABASE_URL` is set and
 * none of the Redis variables is, else `redis`. A deployment that names a Redis keeps Redis.
 */
export function chooseBackend(
  env: NodeJS.ProcessEnv = process.env,
  configured?: BackendKind | undefined,
): BackendChoice {
  const explicit = env.SWITCHYARD_BACKEND?.trim();
  if (explicit) {
    if (explicit !== 'redis' && explicit !== 'postgres') {
      throw new ConfigError('SWITCHYARD_BACKEND', `expected "redis" or "postgres", got "${explicit}"`);
    }
    return { backend: explicit, reason: 'SWITCHYARD_BACKEND' };
  }
  if (configured) return { backend: configured, reason: 'config backend' };
  const redisVariables = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'].filter((key) =>
    env[key]?.trim(),
  );
  if (env.DATABASE_URL?.trim() && redisVariables.length === 0) {
    return { backend: 'postgres', reason: 'DATABASE_URL without REDIS_URL' };
  }
  return {
    backend: 'redis',
    reason: redisVariables.length > 0 ? `${redisVariables[0]} set` : 'the default (no DATABASE_URL)',
  };
}
