import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

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
