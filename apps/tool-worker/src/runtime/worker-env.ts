import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  ConfigError,
  configPathFromEnv,
  prefixFromEnv,
  type RedisTarget,
  redisTargetFromEnv,
} from '@switchyard/contracts';

export interface WorkerEnv {
  redis: RedisTarget;
  /** The PostgreSQL of the postgres backend (DATABASE_URL); unused on redis. */
  databaseUrl: string;
  configPath: string;
  prefix: string;
  /** Servers this worker serves; undefined means all configured servers. */
  servers: string[] | undefined;
  workerId: string;
  /** Port of /metrics and /health; 0 picks a free one, unset disables them. */
  httpPort: number | undefined;
}

/** Reads the worker's environment (docs/configuration.md); bad values are config errors naming the variable. */
export function readWorkerEnv(env: NodeJS.ProcessEnv = process.env): WorkerEnv {
  let prefix: string;
  try {
    prefix = prefixFromEnv(env);
  } catch (error) {
    throw new ConfigError('SWITCHYARD_PREFIX', (error as Error).message);
  }
  const list = env.WORKER_SERVERS?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return {
    redis: redisTargetFromEnv(env),
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    configPath: configPathFromEnv(env),
    prefix,
    servers: list && list.length > 0 ? list : undefined,
    workerId: env.WORKER_ID ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    httpPort: parsePort(env.WORKER_HTTP_PORT ?? '9464'),
  };
}

function parsePort(raw: string): number | undefined {
  if (raw === '' || raw === 'off') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(
      'WORKER_HTTP_PORT',
      `not a port: ${raw} (use 0 for any free port, "off" to disable)`,
    );
  }
  return port;
}
