import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from './models.ts';

export const DEPLOY_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPO_ROOT = join(DEPLOY_DIR, '..');
export const K8S_DIR = join(DEPLOY_DIR, 'k8s');

export interface Kustomization {
  /** `base`, or the overlay's directory name. */
  name: string;
  dir: string;
}

/** The base and every directory under k8s/overlays that holds a kustomization. */
export function kustomizations(): Kustomization[] {
  const found: Kustomization[] = [{ name: 'base', dir: join(K8S_DIR, 'base') }];
  const overlays = join(K8S_DIR, 'overlays');
  for (const entry of readdirSync(overlays, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(overlays, entry.name);
    if (
      ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].some((file) => existsSync(join(dir, file)))
    ) {
      found.push({ name: entry.name, dir });
    }
  }
  return found;
}

let kubectlChecked = false;

function requireKubectl(): void {
  if (kubectlChecked) return;
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'pipe' });
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? 'kubectl was not found on PATH. The deploy tests render deploy/k8s with `kubectl kustomize` ' +
            '(kubectl >= 1.27 bundles kustomize v5): install kubectl, e.g. https://kubernetes.io/docs/tasks/tools/'
        : `kubectl is on PATH but \`kubectl version --client\` failed: ${(error as Error).message}`,
    );
  }
  kubectlChecked = true;
}

const renders = new Map<string, KubeObject[]>();

/** `kubectl kustomize <dir>`, parsed: every document, in order. Memoised per directory. */
export function render(dir: string): KubeObject[] {
  const cached = renders.get(dir);
  if (cached) return cached;
  requireKubectl();
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', dir], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(
      `kubectl kustomize ${relative(REPO_ROOT, dir)} failed:\n${stderr || (error as Error).message}`,
    );
  }
  const objects = parseDocuments(text, `kubectl kustomize ${relative(REPO_ROOT, dir)}`);
  renders.set(dir, objects);
  return objects;
}

export function parseDocuments(text: string, source: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      throw new Error(`${source}: invalid YAML: ${document.errors.map((e) => e.message).join('; ')}`);
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as KubeObject);
  }
  return objects;
}
