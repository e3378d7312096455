import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { REPO_ROOT } from './paths.ts';

export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a command run the way a user runs it: this test's Node first on PATH (so `npm`,
 * `npx` and a bin's `#!/usr/bin/env node` run on it, not an older system Node), and none of the
 * `npm_*` variables an enclosing `npm run`/`npx` sets, which would point npm at the monorepo.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  return { ...env, PATH: `${dirname(process.execPath)}:${env.PATH ?? ''}`, NO_COLOR: '1', ...extra };
}

/** Runs `command` to its end; `timeoutMs` only bounds a hang (the child is killed then). */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CommandRun> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: userEnv(options.env),
        timeout: options.timeoutMs ?? 120_000,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

const packOutput = z.array(
  z.object({ name: z.string(), filename: z.string(), files: z.array(z.object({ path: z.string() })) }),
);

export interface Tarball {
  name: string;
  path: string;
  /** The paths inside the tarball, as `npm pack` lists them. */
  files: string[];
}

/** `npm pack` of the given workspaces (e.g. libs/client) into `dir`: one tarball each, what a registry would get. */
export async function packWorkspaces(workspaces: string[], dir: string): Promise<Tarball[]> {
  const packed = await runCommand(
    'npm',
    ['pack', '--json', '--pack-destination', dir, ...workspaces.flatMap((workspace) => ['-w', workspace])],
    { cwd: REPO_ROOT },
  );
  if (packed.code !== 0) throw new Error(`npm pack failed (${packed.code}): ${packed.stderr}`);
  return packOutput.parse(JSON.parse(packed.stdout)).map((entry) => ({
    name: entry.name,
    path: join(dir, entry.filename),
    files: entry.files.map((file) => file.path),
  }));
}

/**
 * A fresh project in `dir` (its own package.json, outside the monorepo) with `tarballs` installed.
 * `--prefer-offline`: the third-party dependencies come from the npm cache, which the monorepo's install
 * filled with their tarballs but (installing from its lockfile) not always with their registry metadata,
 * which only `--offline` would require; missing metadata is fetched.
 */
export async function installFresh(dir: string, tarballs: string[]): Promise<CommandRun> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'fresh-install', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  return runCommand('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
    cwd: dir,
  });
}
