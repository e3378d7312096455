import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  ConfigError,
  configPathFromEnv,
  prefixFromEnv,
  type RedisTarget,
  redisTargetFromEnv,
} from '@switchyard/contracts';

export interface OrchestratorEnv {
  redis: RedisTarget;
  databaseUrl: string;
  /** PostgreSQL schema holding jobs, tool calls, events and LangGraph checkpoints. */
  databaseSchema: string;
  configPath: string;
  prefix: string;
  port: number;
  host: string;
  replicaId: string;
  jaegerUiUrl: string | undefined;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** Reads the orchestrator's environment (docs/configuration.md); a bad value is a config error naming the variable. */
export function readOrchestratorEnv(env: NodeJS.ProcessEnv = process.env): OrchestratorEnv {
  let prefix: string;
  try {
    prefix = prefixFromEnv(env);
  } catch (error) {
    throw new ConfigError('SWITCHYARD_PREFIX', (error as Error).message);
  }
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError('PORT', `not a port: ${env.PORT}`);
  const databaseSchema = env.DATABASE_SCHEMA ?? 'switchyard';
  if (!SCHEMA.test(databaseSchema)) {
    throw new ConfigError('DATABASE_SCHEMA', `must match ${SCHEMA.source}: ${databaseSchema}`);
  }
  return {
    redis: redisTargetFromEnv(env),
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    databaseSchema,
    configPath: configPathFromEnv(env),
    prefix,
    port,
    host: env.HOST ?? '0.0.0.0',
    replicaId: env.REPLICA_ID ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    jaegerUiUrl: env.JAEGER_UI_URL || undefined,
  };
}
