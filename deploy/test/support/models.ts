/**
 * Validation of rendered Kubernetes objects against `kubernetes-models` and `@kubernetes-models/keda`.
 *
 * Two layers:
 *  - the packages' own JSON-schema validators (`model.validate()`): types, enums, required fields;
 *  - an unknown-field check the validators do not do (the OpenAPI schemas allow extra properties, so a
 *    typo such as `readinesProbe` would pass them and be silently dropped by the API server). The
 *    known fields are read from the packages' `.d.ts` declarations, which mirror the schemas.
 * An apiVersion/kind that neither package models is a failure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface ModelInstance {
  validate(): void;
}
interface ModelClass {
  new (data?: unknown): ModelInstance;
  apiVersion: string;
  kind: string;
}

/** Model packages, tried in order; each lays its models out as `<apiVersion>/<Kind>`. */
const MODEL_PACKAGES = [
  'kubernetes-models',
  '@kubernetes-models/keda',
  // PrometheusRule, ServiceMonitor, PodMonitor: generated from the operator's CRDs by the same project.
  '@kubernetes-models/prometheus-operator',
] as const;

/** Where a package is installed: found along require's search paths, as ESM-only ones have no require entry. */
function packageDir(name: string, from: string = import.meta.url): string {
  const paths = createRequire(from).resolve.paths(name) ?? [];
  const found = paths.map((dir) => join(dir, name)).find((dir) => existsSync(join(dir, 'package.json')));
  if (!found) throw new Error(`package ${name} is not installed (npm install at the repository root)`);
  return found;
}

function isModelClass(value: unknown): value is ModelClass {
  return (
    typeof value === 'function' &&
    typeof (value as Partial<ModelClass>).apiVersion === 'string' &&
    typeof (value as Partial<ModelClass>).kind === 'string'
  );
}

interface FoundModel {
  ctor: ModelClass;
  declarations: string;
}

const modelCache = new Map<string, Promise<FoundModel | undefined>>();

/** The model class of apiVersion/kind, or undefined when no installed package models it. */
export function findModel(apiVersion: string, kind: string): Promise<FoundModel | undefined> {
  const key = `${apiVersion}/${kind}`;
  let found = modelCache.get(key);
  if (!found) {
    found = lookUpModel(apiVersion, kind);
    modelCache.set(key, found);
  }
  return found;
}

async function lookUpModel(apiVersion: string, kind: string): Promise<FoundModel | undefined> {
  if (!/^([a-z0-9][a-z0-9.-]*\/)?v[0-9][a-z0-9]*$/.test(apiVersion) || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    return undefined;
  }
  for (const pkg of MODEL_PACKAGES) {
    const declarations = join(packageDir(pkg), apiVersion, `${kind}.d.ts`);
    if (!existsSync(declarations)) continue;
    const module = (await import(`${pkg}/${apiVersion}/${kind}`)) as Record<string, unknown>;
    const ctor = module[kind];
    if (isModelClass(ctor) && ctor.apiVersion === apiVersion && ctor.kind === kind) {
      return { ctor, declarations };
    }
  }
  return undefined;
}

/** Every problem with one object: unknown kind, schema violations, unknown fields. Empty = valid. */
export async function validateObject(object: unknown): Promise<string[]> {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return ['not an object'];
  const { apiVersion, kind, metadata } = object as Partial<KubeObject>;
  const name = `${kind ?? '?'} ${metadata?.name ?? '?'}`;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return [`${name}: apiVersion/kind missing`];
  const model = await findModel(apiVersion, kind);
  if (!model) {
    return [
      `${name}: unknown apiVersion/kind ${apiVersion}/${kind} (not in kubernetes-models or @kubernetes-models/keda)`,
    ];
  }
  const problems: string[] = [];
  if (typeof metadata?.name !== 'string' || metadata.name === '')
    problems.push(`${name}: metadata.name missing`);
  try {
    new model.ctor(withUnfoldedSecretData(object as KubeObject)).validate();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
  }
  const shape = shapeOf(model.declarations);
  if (shape) checkFields(object, { kind: 'shape', shape }, '', problems, name);
  return problems;
}

/**
 * kustomize folds long base64 values of a Secret's `data` over several lines. The API server accepts
 * that (Go's base64 decoder skips newlines); the models' "byte" format does not, so unfold first.
 */
function withUnfoldedSecretData(object: KubeObject): KubeObject {
  if (object.kind !== 'Secret' || object.data === null || typeof object.data !== 'object') return object;
  const data = Object.fromEntries(
    Object.entries(object.data).map(([key, value]) => [
      key,
      typeof value === 'string' ? value.replace(/\s+/g, '') : value,
    ]),
  );
  return { ...object, data };
}

// ---- known fields, from the .d.ts declarations ----------------------------------------------------

type FieldType = { kind: 'shape'; shape: Shape } | { kind: 'ref'; file: string } | { kind: 'opaque' };
interface Shape {
  props: Map<string, FieldType>;
  /** Has an index signature: any key is allowed. */
  open: boolean;
}

const shapeCache = new Map<string, Shape | undefined>();

/** The first interface declared in a .d.ts file, or undefined (a type alias such as IntOrString). */
function shapeOf(file: string): Shape | undefined {
  if (shapeCache.has(file)) return shapeCache.get(file);
  shapeCache.set(file, undefined); // recursion guard
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('export interface '));
  const shape = start < 0 ? undefined : parseBlock(lines, start + 1, importsOf(text, file)).shape;
  shapeCache.set(file, shape);
  return shape;
}

/** Imported type name → the .d.ts file declaring it. */
function importsOf(text: string, file: string): Map<string, string> {
  const imports = new Map<string, string>();
  for (const match of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";$/gm)) {
    const [, names = '', specifier = ''] = match;
    const target = resolveDeclarations(specifier, file);
    if (!target) continue;
    for (const name of names.split(',')) imports.set(name.trim(), target);
  }
  return imports;
}

function resolveDeclarations(specifier: string, from: string): string | undefined {
  let path: string;
  if (specifier.startsWith('.')) {
    // Newer model packages import `./Spec.js` (ESM), older ones `./Spec`: either is `Spec.d.ts`.
    path = resolve(dirname(from), `${specifier.replace(/\.js$/, '')}.d.ts`);
  } else {
    const parts = specifier.split('/');
    const pkg = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
    const subpath = parts.slice(specifier.startsWith('@') ? 2 : 1).join('/');
    if (subpath === '') return undefined;
    try {
      path = join(packageDir(pkg, from), `${subpath}.d.ts`);
    } catch {
      return undefined;
    }
  }
  return existsSync(path) ? path : undefined;
}

function parseBlock(
  lines: string[],
  start: number,
  imports: Map<string, string>,
): { shape: Shape; next: number } {
  const shape: Shape = { props: new Map(), open: false };
  let index = start;
  while (index < lines.length) {
    const line = (lines[index] ?? '').trim();
    index += 1;
    if (line === '' || line.startsWith('/**') || line.startsWith('*')) continue;
    if (line.startsWith('}')) return { shape, next: index };
    const property = /^"([^"]+)"\??: (.*)$/.exec(line) ?? /^(\[key: string\]): (.*)$/.exec(line);
    if (!property) continue;
    const [, name = '', rest = ''] = property;
    let type: FieldType;
    if (rest.endsWith('{')) {
      const inner = parseBlock(lines, index, imports);
      index = inner.next;
      type = { kind: 'shape', shape: inner.shape };
    } else {
      const bare = rest.replace(/;$/, '').replace(/^Array<(.*)>$/, '$1');
      const file = imports.get(bare);
      type = file ? { kind: 'ref', file } : { kind: 'opaque' };
    }
    if (name === '[key: string]') shape.open = true;
    else shape.props.set(name, type);
  }
  return { shape, next: index };
}

function checkFields(value: unknown, type: FieldType, path: string, problems: string[], name: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkFields(item, type, `${path}[${index}]`, problems, name);
    });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  let shape: Shape | undefined;
  if (type.kind === 'shape') shape = type.shape;
  else if (type.kind === 'ref') shape = shapeOf(type.file);
  if (!shape) return;
  for (const [key, item] of Object.entries(value)) {
    const field = shape.props.get(key);
    if (field) checkFields(item, field, path === '' ? key : `${path}.${key}`, problems, name);
    else if (!shape.open) problems.push(`${name}: unknown field ${path === '' ? key : `${path}.${key}`}`);
  }
}

/** The installed packages and versions, for messages. */
export function modelPackages(): string {
  return MODEL_PACKAGES.map((pkg) => {
    const manifest = JSON.parse(readFileSync(join(packageDir(pkg), 'package.json'), 'utf8')) as {
      version: string;
    };
    return `${pkg}@${manifest.version}`;
  }).join(', ');
}
