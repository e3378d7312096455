import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './ports.ts';

/**
 * The arguments of a loopback redis-server without persistence (no AOF, no snapshots), logging to
 * stdout for readiness: the replicas, sentinels' primaries and benchmarks of the suites.
 */
export function volatileRedisArgs(port: number, dir: string, name: string, extra: string[] = []): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--dbfilename',
    `${name}.rdb`,
    '--appendonly',
    'no',
    '--save',
    '',
    '--logfile',
    '',
    ...extra,
  ];
}

/**
 * A Redis server of a test's own, with AOF (appendfsync always) unless asked not to, that the test may kill and restart:
 * never the machine's shared one. Readiness is read from its log, not guessed.
 */
export class DedicatedRedis {
  /** `persistent: false`: no AOF, for measurements of Redis's own work (the benchmark's command counts). */
  constructor(private readonly options: { persistent?: boolean } = {}) {}

  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-'));
  port = 0;
  restarts = 0;

  /** The server's pid, e.g. to SIGSTOP it (a frozen Redis) and SIGCONT it again. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        ...(this.options.persistent === false
          ? ['--appendonly', 'no']
          : ['--appendonly', 'yes', '--appendfsync', 'always']),
        '--save',
        '',
        '--logfile',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('redis-server did not become ready in 15 s')), 15_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`cannot start redis-server (is it installed?): ${error.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code} before it was ready`));
      });
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        if (line.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** SIGKILL (no chance to save anything but what AOF already has), then start again on the same port. */
  async crashAndRestart(): Promise<void> {
    await this.kill();
    await this.start();
    this.restarts += 1;
  }

  /**
   * SIGKILL, then start again on the same port with nothing in it — its files (AOF) deleted first: a
   * Redis without persistence that restarted, or one whose disk was lost. Clients reconnect to it.
   */
  async restartEmpty(): Promise<void> {
    await this.kill();
    for (const entry of readdirSync(this.dir))
      rmSync(join(this.dir, entry), { recursive: true, force: true });
    await this.start();
    this.restarts += 1;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** SIGKILL and wait for the exit; `start()` brings it back on the same port. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
