import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { installFresh, packWorkspaces, runCommand, type Tarball } from '../support/packed-packages.ts';
import { REPO_ROOT } from '../support/paths.ts';

/** The program a user of the installed client runs: the README's example (submit, follow), then a list. */
const CLIENT_SCRIPT = `
import('@switchyard/client').then(async ({ createSwitchyardClient }) => {
  const client = createSwitchyardClient({ url: process.env.SWITCHYARD_URL, apiKey: process.env.SWITCHYARD_API_KEY });
  const job = await client.submitJob({ kind: 'batch', calls: [{ tool: 'search__search', arguments: { query: 'packages' } }] });
  const events = [];
  for await (const event of client.followJob(job.id)) events.push(event.event === 'status' ? event.data.status : event.event);
  const page = await client.listJobs({ status: ['succeeded'] });
  console.log(JSON.stringify({ id: job.id, events, listed: page.jobs.map((listed) => listed.id) }));
});
`;

/** A TypeScript user's file: compiles only when the packages' `types` resolve, as a consumer's tsc sees them. */
const TYPED_USE = `
import { createSwitchyardClient, type JobList, SwitchyardApiError } from '@switchyard/client';
import { runCli } from '@switchyard/cli';

const client = createSwitchyardClient({ url: 'http://127.0.0.1:3000', apiKey: 'key' });
const page: JobList = await client.listJobs({ status: ['failed'] });
const code: number = await runCli(['--help']);
console.log(page.jobs[0]?.status, code, SwitchyardApiError.name);
// @ts-expect-error the options are typed: an unknown one is an error
createSwitchyardClient({ url: 'http://127.0.0.1:3000', apiKey: 'key', baseUrl: 'no' });
`;

/**
 * `@switchyard/client` and `@switchyard/cli` as someone outside the monorepo gets them: `npm run build`,
 * `npm pack` of both, `npm install` of the two tarballs into a fresh project, then the installed client
 * and `npx switchyard` against a real orchestrator (worker, MCP server, Redis or PostgreSQL). Nothing of
 * the monorepo is reachable from that project: no workspace links, no sources, no tsx.
 */
describe('the published packages', () => {
  let dir: string;
  let project: string;
  let client: Tarball;
  let cli: Tarball;
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let packedAt: number;
  const asAlpha = () => ({ SWITCHYARD_URL: orchestrator.url, SWITCHYARD_API_KEY: TEAM_KEYS.alpha });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-packages-'));
    // The tarballs hold dist/, built by each package's own `prepack` (as `npm pack` of a fresh clone,
    // with no dist/ yet, builds it): never stale, and nothing built beforehand by this test.
    packedAt = Date.now();
    const tarballs = await packWorkspaces(['libs/client', 'apps/cli'], dir);
    client = tarballs.find((tarball) => tarball.name === '@switchyard/client') as Tarball;
    cli = tarballs.find((tarball) => tarball.name === '@switchyard/cli') as Tarball;
    project = join(dir, 'project');
    const installed = await installFresh(project, [client.path, cli.path]);
    if (installed.code !== 0) throw new Error(`npm install of the tarballs failed: ${installed.stderr}`);

    deployment = new Deployment('packages', () => ({ search: exampleServer('search', { trusted: true }) }));
    await deployment.startWorker({ id: 'w-packages' });
    orchestrator = await deployment.startOrchestrator('o-packages');
  });

  afterAll(async () => {
    await deployment?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds what it packs: each package has a prepack that compiles its dist/ (the CLI the client first)', () => {
    for (const file of [
      'libs/client/dist/index.js',
      'libs/client/dist/index.d.ts',
      'apps/cli/dist/program.js',
    ]) {
      expect(
        statSync(join(REPO_ROOT, file)).mtimeMs,
        `${file} was not rebuilt by npm pack`,
      ).toBeGreaterThanOrEqual(packedAt - 1_000);
    }
  });

  it('packs what a user runs and nothing of the monorepo: built JS, types, README, the OpenAPI document', () => {
    expect(client.files).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.d.ts',
        'openapi.json',
        'README.md',
        'package.json',
      ]),
    );
    expect(cli.files).toEqual(
      expect.arrayContaining(['bin/switchyard.js', 'dist/main.js', 'dist/program.d.ts', 'README.md']),
    );
    for (const tarball of [client, cli]) {
      expect(tarball.files.filter((file) => /^(src|test)\/|tsconfig|vitest|\.map$/.test(file))).toEqual([]);
    }
    const manifest = (name: string) =>
      JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8'));
    const rootEngines = JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')).engines;
    for (const name of ['@switchyard/client', '@switchyard/cli']) {
      expect(manifest(name)).not.toHaveProperty('private');
      expect(manifest(name)).toMatchObject({ type: 'module', engines: rootEngines });
    }
    // The CLI's client is the client tarball, by its semver range (a registry would resolve it the same).
    expect(manifest('@switchyard/cli').dependencies['@switchyard/client']).toBe(
      `^${manifest('@switchyard/client').version}`,
    );
  });

  it('the installed client submits a job, follows its events to the end and lists it, with a team key', async () => {
    const result = await runCommand(process.execPath, ['-e', CLIENT_SCRIPT], {
      cwd: project,
      env: asAlpha(),
    });
    expect(result.code, result.stderr).toBe(0);
    const seen = JSON.parse(result.stdout) as { id: string; events: string[]; listed: string[] };
    expect(seen.events).toEqual(expect.arrayContaining(['tool_call.dispatched', 'tool_call.finished']));
    expect(seen.events.at(-1)).toBe('succeeded');
    expect(seen.listed).toContain(seen.id);
  });

  it("a TypeScript user's code compiles against the installed packages' types (no lib check skipped)", async () => {
    writeFileSync(join(project, 'use.ts'), TYPED_USE);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2023',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        include: ['use.ts'],
      }),
    );
    const tsc = resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc');
    const result = await runCommand(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('npx switchyard: --help exits 0, and a watched job submitted through it exits 0 when it succeeds', async () => {
    // `--no`: the installed bin or nothing (never a download); `--` so `--help` is the CLI's, not npx's.
    const help = await runCommand('npx', ['--no', '--', 'switchyard', '--help'], { cwd: project });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: switchyard \[options\] \[command\]/);
    expect(help.stdout).toMatch(/^ {2}jobs /m);

    const watched = await runCommand(
      'npx',
      [
        '--no',
        '--',
        'switchyard',
        'jobs',
        'submit',
        '--tool',
        'search__search',
        '--args',
        '{"query":"npx"}',
        '--watch',
      ],
      { cwd: project, env: asAlpha() },
    );
    expect(watched.code, watched.stdout + watched.stderr).toBe(0);
    const lines = watched.stdout.trim().split('\n');
    const id = /^submitted (job_[0-9a-f-]{36}) batch queued/.exec(lines[0] ?? '')?.[1];
    expect(id, watched.stdout).toBeDefined();
    expect(lines).toContainEqual(
      expect.stringMatching(/ ✓ search__search \[.+\] ok on search by w-packages /),
    );
    expect(lines.at(-1)).toMatch(/job succeeded$/);

    const refused = await runCommand('npx', ['--no', '--', 'switchyard', 'jobs', 'get', id as string], {
      cwd: project,
      env: { ...asAlpha(), SWITCHYARD_API_KEY: 'not-a-key-of-any-team-000' },
    });
    // The documented exit code of an API refusal (README "The CLI": 6).
    expect(refused.code, refused.stderr).toBe(6);
  });
});
