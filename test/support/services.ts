import { connect } from 'node:net';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** True when something accepts a TCP connection at `url`'s host and port within `timeoutMs`. */
export function answers(url: string, defaultPort: number, timeoutMs = 1_000): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const parsed = new URL(url);
    host = parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
    port = Number(parsed.port) || defaultPort;
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The Redis the tests use (REDIS_URL, else the machine's) and whether it answers. */
export async function redisService(): Promise<{ url: string; up: boolean }> {
  const url = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  return { url, up: await answers(url, 6379) };
}

/** The PostgreSQL the tests use (DATABASE_URL, else the machine's) and whether it answers. */
export async function postgresService(): Promise<{ url: string; up: boolean }> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  return { url, up: await answers(url, 5432) };
}
