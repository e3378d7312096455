/**
 * The Helm chart (deploy/helm/switchyard) and the value sets its tests render it with
 * (deploy/test/helm-values/*.yaml, layered over the chart's values.yaml).
 */
import { join, resolve } from 'node:path';
import { helm } from './helm.ts';
import { DEPLOY_DIR, parseDocuments } from './kustomize.ts';
import type { BuildOptions } from './manifests.ts';
import type { KubeObject } from './models.ts';

export const CHART_DIR = join(DEPLOY_DIR, 'helm', 'switchyard');
const VALUES_DIR = join(DEPLOY_DIR, 'test', 'helm-values');
export const RELEASE = 'switchyard';
export const NAMESPACE = 'switchyard';

/** The Secrets a default install expects to exist (secrets.create false). */
const APP_SECRETS = ['switchyard-secrets', 'switchyard-model-keys', 'switchyard-database'];

export interface ValueSet {
  name: string;
  /** Files under deploy/test/helm-values (or absolute paths), in order. */
  files: string[];
  options: BuildOptions;
}

export const VALUE_SETS: ValueSet[] = [
  {
    name: 'default',
    files: [],
    options: { externalSecrets: [...APP_SECRETS, 'switchyard-redis'], workerScaling: 'fixed' },
  },
  {
    name: 'postgres',
    files: ['postgres.yaml'],
    options: { externalSecrets: [...APP_SECRETS, 'switchyard-keda-postgres'], workerScaling: 'keda' },
  },
  {
    name: 'autoscaling',
    files: ['autoscaling.yaml'],
    options: { externalSecrets: [...APP_SECRETS, 'switchyard-redis'], workerScaling: 'keda' },
  },
  {
    name: 'monitoring',
    files: ['monitoring.yaml'],
    options: { externalSecrets: [...APP_SECRETS, 'switchyard-redis'], workerScaling: 'fixed' },
  },
  {
    name: 'exposed',
    files: ['exposed.yaml'],
    options: { externalSecrets: [], workerScaling: 'fixed' },
  },
];

export function valueSet(name: string): ValueSet {
  const found = VALUE_SETS.find((v) => v.name === name);
  if (!found) throw new Error(`no chart value set ${name}`);
  return found;
}

const valueArgs = (files: string[], extra: string[]) => [
  // Relative to deploy/test/helm-values; an absolute path is taken as it is.
  ...files.flatMap((file) => ['--values', resolve(VALUES_DIR, file)]),
  ...extra,
];

/** `helm lint --strict` with the value set's files and any extra arguments (`--set …`). */
export function lintChart(files: string[], extra: string[] = []): Promise<string> {
  return helm(['lint', '--strict', CHART_DIR, ...valueArgs(files, extra)]);
}

const renders = new Map<string, Promise<KubeObject[]>>();

/** `helm template`, parsed; memoised per argument list. */
export function renderChart(files: string[], extra: string[] = []): Promise<KubeObject[]> {
  const args = ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...valueArgs(files, extra)];
  const key = args.join('\0');
  let found = renders.get(key);
  if (!found) {
    found = helm(args).then((text) => parseDocuments(text, `helm ${args.slice(0, 3).join(' ')}`));
    renders.set(key, found);
  }
  return found;
}
