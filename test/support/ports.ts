import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/**
 * A port that was free a moment ago, for a server a test must restart on the same address. Chosen
 * below the kernel's ephemeral range (32768+), so outgoing connections cannot take it in between.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await tryListen(20_000 + Math.floor(Math.random() * 12_000));
    if (port) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

/**
 * A free port whose companion `port + offset` is free too (a Redis Cluster node's bus port), both below
 * the kernel's ephemeral range.
 */
export async function freePortPair(offset: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await tryListen(20_000 + Math.floor(Math.random() * (32_000 - 20_000 - offset)));
    if (port && (await tryListen(port + offset))) return port;
  }
  throw new Error(`no free port pair (p, p + ${offset}) between 20000 and 32000`);
}

/** True when nothing accepts connections on 127.0.0.1:`port` any more (a stopped server's port). */
export function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Gone: no such pid, or only a zombie its parent has not reaped yet. */
export function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}
