import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';

export interface LocalService {
  url: string;
  /** How the demo got it: from the environment, the local default, or started by the demo. */
  source: 'env' | 'default' | 'started';
  stop: () => Promise<void>;
}

const nothingToStop = async () => undefined;

async function redisAnswers(url: string): Promise<boolean> {
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
      'No Redis: set REDIS_URL, start one on 127.0.0.1:6379, or install redis-server (Debian: apt-get install redis-server) so the demo can start its own.',
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

/** The PostgreSQL binaries of a Debian/Ubuntu install, or whatever is on PATH. */
function postgresBinary(name: string): string | undefined {
  const found = spawnSync(
    'sh',
    ['-c', `command -v ${name} || ls -d /usr/lib/postgresql/*/bin/${name} 2>/dev/null | sort -V | tail -n 1`],
    {
      encoding: 'utf8',
    },
  ).stdout.trim();
  return found || undefined;
}

/**
 * DATABASE_URL if set; else postgres@127.0.0.1:5432 if it answers; else a throwaway cluster (initdb +
 * postgres, as a non-root user); else a clear error saying what is missing.
 */
export async function ensurePostgres(): Promise<LocalService> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    if (await postgresAnswers(fromEnv)) return { url: fromEnv, source: 'env', stop: nothingToStop };
    throw new Error(`DATABASE_URL=${fromEnv} does not answer`);
  }
  for (const local of [
    'postgres://postgres@127.0.0.1:5432/postgres',
    `postgres://${process.env.USER ?? 'postgres'}@127.0.0.1:5432/postgres`,
  ]) {
    if (await postgresAnswers(local)) return { url: local, source: 'default', stop: nothingToStop };
  }
  const initdb = postgresBinary('initdb');
  const postgres = postgresBinary('postgres');
  if (!initdb || !postgres) {
    throw new Error(
      'No PostgreSQL: set DATABASE_URL, start one on 127.0.0.1:5432 (user postgres, trust auth), or install PostgreSQL (Debian: apt-get install postgresql) so the demo can start its own.',
    );
  }
  if (process.getuid?.() === 0) {
    throw new Error(
      'No PostgreSQL answers on 127.0.0.1:5432, and PostgreSQL refuses to run as root, so the demo cannot start its own: set DATABASE_URL or start the system cluster (pg_ctlcluster <version> main start).',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-postgres-'));
  const init = spawnSync(initdb, ['-D', dir, '-U', 'postgres', '--auth=trust', '--no-sync'], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const child = spawn(
    postgres,
    ['-D', dir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    {
      stdio: 'ignore',
    },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let attempt = 0; attempt < 100 && !(await postgresAnswers(url)); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    source: 'started',
    stop: async () => {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
