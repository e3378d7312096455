import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePortPair } from './ports.ts';

const run = promisify(execFile);

/**
 * A Redis Cluster of three primaries (no replicas unless asked for) that a test run starts for itself from the
 * machine's `redis-server` and `redis-cli --cluster create`, and stops again. Readiness is read from
 * each server's log and from CLUSTER INFO on every node, not guessed.
 */
export class LocalRedisCluster {
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-cluster-'));
  private readonly children: ChildProcess[] = [];
  readonly ports: number[] = [];

  /** `host:port,host:port,…`, the form REDIS_CLUSTER_NODES takes. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** Pids of the nodes by port, e.g. to freeze one (SIGSTOP). */
  readonly pids = new Map<number, number>();

  async start(primaries = 3, replicasPerPrimary = 0): Promise<void> {
    for (let index = 0; index < primaries * (1 + replicasPerPrimary); index++) {
      // The cluster bus listens on port + 10000; both must be free.
      const port = await freePortPair(10_000);
      this.ports.push(port);
      await this.startNode(port);
    }
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...this.ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        String(replicasPerPrimary),
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    await Promise.all(this.ports.map((port) => this.untilClusterOk(port)));
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async startNode(port: number): Promise<void> {
    const dir = join(this.dir, String(port));
    mkdirSync(dir);
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '5000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--logfile',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.children.push(child);
    if (child.pid) this.pids.set(port, child.pid);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`cluster node ${port} not ready in 15 s`)), 15_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`cannot start redis-server (is it installed?): ${error.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`cluster node ${port} exited with ${code} before it was ready`));
      });
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        if (line.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** Every node must see all slots assigned before a client is let at it. */
  private async untilClusterOk(port: number): Promise<void> {
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
    try {
      await redis.connect();
      const deadline = Date.now() + 60_000;
      for (;;) {
        const info = await redis.cluster('INFO');
        if (String(info).includes('cluster_state:ok')) return;
        if (Date.now() > deadline) throw new Error(`cluster node ${port}: ${info}`);
        // CLUSTER INFO has no blocking form; the state settles within a few gossip rounds.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      redis.disconnect();
    }
  }
}
