import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './ports.ts';

const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

/** As root, PostgreSQL must run as another user: the `postgres` account's ids. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/**
 * A PostgreSQL cluster of a test's own (initdb in a temp dir, trust auth, Unix socket in that dir, a
 * free TCP port on 127.0.0.1) that the test may stop and start again: never the machine's shared one.
 * Readiness is read from its log, not guessed.
 */
export class DedicatedPostgres {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-pg-'));
  private readonly user = runAs();
  port = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** initdb (first time only) and start. */
  async start(): Promise<void> {
    if (!this.port) {
      this.port = await freePort();
      if (this.user) chownSync(this.dir, this.user.uid, this.user.gid);
      execFileSync(
        join(BIN, 'initdb'),
        ['-D', join(this.dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'],
        { stdio: 'ignore', ...this.user },
      );
    }
    const child = spawn(
      join(BIN, 'postgres'),
      [
        '-D',
        join(this.dir, 'data'),
        '-p',
        String(this.port),
        '-k',
        this.dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...this.user },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('postgres did not become ready in 30 s')), 30_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`cannot start postgres from ${BIN}: ${error.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`postgres exited with ${code} before it was ready`));
      });
      createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
        if (line.includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** Fast shutdown (SIGINT): every client connection is terminated, as in a restart or a failover. */
  async stopServer(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    await this.stopServer();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
