import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import pg from 'pg';
import { DATABASE_URL } from '../support/deployment.ts';
import { connect, REDIS_URL } from '../support/redis.ts';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryBytes: number;
  node: string;
  os: string;
  redis: string;
  postgres: string;
  /** 1-minute load average when the run started and ended: how busy the shared machine was. */
  loadStart: number;
  loadEnd?: number;
}

/** What the figures were measured on; also checks that Redis and PostgreSQL answer, with a clear error. */
export async function machineInfo(): Promise<Machine> {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    node: process.version,
    os: `${process.platform} ${release()}`,
    redis: await redisVersion(),
    postgres: await postgresVersion(),
    loadStart: loadavg()[0] ?? 0,
  };
}

async function redisVersion(): Promise<string> {
  const redis = connect('switchyard-bench-info');
  try {
    const info = await Promise.race([
      redis.info('server'),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer in 5 s')), 5_000)),
    ]);
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch (error) {
    throw new Error(`the benchmark needs Redis at ${REDIS_URL} (REDIS_URL): ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

async function postgresVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>('SHOW server_version');
    return result.rows[0]?.server_version.split(' ')[0] ?? 'unknown';
  } catch (error) {
    throw new Error(
      `the benchmark needs PostgreSQL at ${DATABASE_URL} (DATABASE_URL): ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
