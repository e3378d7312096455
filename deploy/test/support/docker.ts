/**
 * Static checks of the Dockerfiles and the compose file (no Docker engine is needed or used).
 * Each check returns its problems; empty = fine.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';
import type { SwitchyardConfig } from '@switchyard/contracts';
import { parse as parseYaml } from 'yaml';
import { hardTimeoutMs, parseWithPlaceholders } from './manifests.ts';

// ---- Dockerfile parsing -------------------------------------------------------------------------

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  index: number;
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): { globalArgs: Map<string, string>; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let buffer = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line)) return; // comments (and parser directives), also inside continuations
    if (buffer === '' && line.trim() === '') return;
    if (buffer === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      buffer += `${line.slice(0, -1)} `;
      return;
    }
    buffer += line;
    const match = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(buffer);
    if (match)
      instructions.push({
        keyword: (match[1] ?? '').toUpperCase(),
        args: (match[2] ?? '').trim(),
        line: startLine,
      });
    buffer = '';
  });

  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/).filter((w) => !w.startsWith('--'));
      const image = (words[0] ?? '').replace(
        /\$\{?(\w+)\}?/g,
        (_m, name: string) => globalArgs.get(name) ?? '',
      );
      const name = words[1]?.toUpperCase() === 'AS' ? words[2] : undefined;
      stages.push({ index: stages.length, name, image, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [name = '', value = ''] = instruction.args.split('=', 2);
        globalArgs.set(name.trim(), value.trim());
      }
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
  line: number;
}

export function parseCopy(instruction: Instruction): Copy {
  let rest = instruction.args;
  let from: string | undefined;
  for (;;) {
    const flag = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    if (!flag) break;
    if (flag[1] === 'from') from = flag[2];
    rest = rest.slice(flag[0].length);
  }
  const words = rest.trim().startsWith('[') ? (JSON.parse(rest) as string[]) : rest.trim().split(/\s+/);
  return {
    from,
    sources: words.slice(0, -1),
    destination: words[words.length - 1] ?? '',
    line: instruction.line,
  };
}

/** Exec-form (JSON array) arguments of CMD / ENTRYPOINT / HEALTHCHECK CMD, or the shell string split. */
function execForm(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith('[')) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/);
}

// ---- .dockerignore ------------------------------------------------------------------------------

export function dockerignoreMatcher(text: string | undefined): (path: string) => boolean {
  const rules = (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = posix
        .normalize((negated ? line.slice(1) : line).replace(/^\/+/, ''))
        .replace(/\/+$/, '');
      let regex = '';
      for (let i = 0; i < pattern.length; i++) {
        const char = pattern[i] ?? '';
        if (pattern.startsWith('**/', i)) {
          regex += '(?:.*/)?';
          i += 2;
        } else if (pattern.startsWith('**', i)) {
          regex += '.*';
          i += 1;
        } else if (char === '*') regex += '[^/]*';
        else if (char === '?') regex += '[^/]';
        else regex += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negated, regex: new RegExp(`^${regex}$`) };
    });
  return (path: string) => {
    const parts = posix.normalize(path).replace(/\/+$/, '').split('/');
    const candidates = parts.map((_p, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (candidates.some((candidate) => rule.regex.test(candidate))) excluded = !rule.negated;
    }
    return excluded;
  };
}

// ---- Dockerfile checks --------------------------------------------------------------------------

/** Directories of the npm workspaces declared in the root package.json (globs like `libs/*` expanded). */
export function workspaceDirs(repoRoot: string): string[] {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    workspaces?: string[];
  };
  const dirs: string[] = [];
  for (const pattern of manifest.workspaces ?? []) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2);
      for (const entry of readdirSync(join(repoRoot, parent), { withFileTypes: true })) {
        if (entry.isDirectory() && existsSync(join(repoRoot, parent, entry.name, 'package.json'))) {
          dirs.push(`${parent}/${entry.name}`);
        }
      }
    } else if (existsSync(join(repoRoot, pattern, 'package.json'))) {
      dirs.push(pattern);
    }
  }
  return dirs.sort();
}

export interface DockerfileExpectations {
  repoRoot: string;
  /** The per-Dockerfile ignore file's text, when there is one. */
  dockerignore: string | undefined;
  runtimeImage: string;
  /** The compiled entry point in the image, relative to WORKDIR /app (`<project>/dist/<file>.js`). */
  main: string;
  port: number;
  /** Paths (relative to /app) the final stage must hold, copied from the context or an earlier stage. */
  mustCopy: string[];
  /** Paths the final stage must not hold (what the other app needs). */
  mustNotCopy: string[];
}

const NPM_INSTALL = /\bnpm (ci|install|i)\b/;

/**
 * Packages of the TypeScript toolchain and the dev tools: none may reach the runtime stage. A name ending
 * in `/` is a scope.
 */
export const TOOLCHAIN_PACKAGES = [
  'typescript',
  '@typescript/',
  'tsx',
  'esbuild',
  '@esbuild/',
  'vite',
  'vitest',
  'nx',
  '@nx/',
  '@biomejs/',
];

function isToolchainPackage(name: string): boolean {
  return TOOLCHAIN_PACKAGES.some((p) => (p.endsWith('/') ? name.startsWith(p) : name === p));
}

/**
 * Toolchain packages that `npm ci --omit=dev` still installs from this lockfile: those not flagged
 * `dev` (e.g. typescript is `devOptional` when a production package names it as an optional peer).
 */
export function toolchainKeptByOmitDev(lockfileText: string): string[] {
  const lock = JSON.parse(lockfileText) as { packages?: Record<string, { dev?: boolean; link?: boolean }> };
  const kept = new Set<string>();
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const name = path.split('node_modules/').pop() ?? '';
    if (path === '' || entry.dev || entry.link || !isToolchainPackage(name)) continue;
    kept.add(name.startsWith('@') ? `${name.split('/')[0]}/` : name);
  }
  return [...kept].sort();
}

/** `rm -rf node_modules/<name>` paths of a RUN (scopes as `@scope/`). */
function removedModules(args: string): string[] {
  return [...args.matchAll(/\brm\s+-r?f?r?\s+([^&|;]+)/g)].flatMap((m) =>
    (m[1] ?? '')
      .trim()
      .split(/\s+/)
      .filter((word) => word.startsWith('node_modules/'))
      .map((word) => {
        const name = word.slice('node_modules/'.length).replace(/\/$/, '');
        return name.startsWith('@') && !name.includes('/') ? `${name}/` : name;
      }),
  );
}

/** Where an instruction's COPY lands, relative to /app. */
function imagePath(destination: string, source: string, intoDirectory: boolean): string {
  const relativeDestination = destination.replace(/^\/app(\/|$)/, './');
  // A stage's whole WORKDIR: its contents land in the destination.
  if (/^\/app\/?$/.test(source)) return posix.normalize(relativeDestination);
  return posix.normalize(
    intoDirectory ? posix.join(relativeDestination, posix.basename(source)) : relativeDestination,
  );
}

/** The `<project>` of a `<project>/dist/….js` entry point. */
function projectOf(main: string): string | undefined {
  const at = main.indexOf('/dist/');
  return at > 0 ? main.slice(0, at) : undefined;
}

/** The TypeScript source a compiled `<project>/dist/x.js` comes from (`<project>/src/x.ts`). */
export function sourceOf(compiled: string): string | undefined {
  const project = projectOf(compiled);
  if (!project || !compiled.endsWith('.js')) return undefined;
  return `${project}/src/${compiled.slice(project.length + '/dist/'.length).replace(/\.js$/, '.ts')}`;
}

export function checkDockerfile(text: string, expect: DockerfileExpectations): string[] {
  const problems: string[] = [];
  const { stages } = parseDockerfile(text);
  const final = stages[stages.length - 1];
  if (!final || stages.length < 3)
    return ['expected a multi-stage build (a deps stage, a build stage and a runtime stage)'];
  const ignored = dockerignoreMatcher(expect.dockerignore);
  const stageNamed = (name: string | undefined) =>
    stages.find((s) => name !== undefined && (s.name === name || String(s.index) === name));

  // Every COPY from the context names paths that exist and are not excluded from the context.
  for (const stage of stages) {
    for (const instruction of stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
      const copy = parseCopy(instruction);
      if (copy.from !== undefined) {
        const earlier = stageNamed(copy.from);
        if (!earlier || earlier.index >= stage.index)
          problems.push(`line ${copy.line}: COPY --from=${copy.from} is not an earlier stage`);
        continue;
      }
      for (const source of copy.sources) {
        if (/[*?[]/.test(source)) {
          problems.push(`line ${copy.line}: COPY ${source}: wildcards are not checked; name the paths`);
        } else if (!existsSync(join(expect.repoRoot, source))) {
          problems.push(`line ${copy.line}: COPY ${source}: no such path in the repository`);
        } else if (ignored(source)) {
          problems.push(`line ${copy.line}: COPY ${source}: excluded by the .dockerignore`);
        }
      }
    }
  }

  // Every stage that installs does so from the lockfile, copying only manifests first (layer caching).
  const installs = (i: Instruction) => i.keyword === 'RUN' && NPM_INSTALL.test(i.args);
  const installing = stages.filter((s) => s.instructions.some(installs));
  if (installing.length === 0) problems.push('no stage installs dependencies (npm ci)');
  const manifests = [
    'package.json',
    'package-lock.json',
    ...workspaceDirs(expect.repoRoot).map((d) => `${d}/package.json`),
  ];
  for (const stage of installing) {
    const label = stage.name ?? `stage ${stage.index}`;
    const install = stage.instructions.findIndex(installs);
    const installArgs = stage.instructions[install]?.args ?? '';
    if (!/\bnpm ci\b/.test(installArgs))
      problems.push(`${label} stage installs with npm install, not npm ci`);
    const copied = stage.instructions
      .slice(0, install)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => parseCopy(i).sources);
    const notManifests = copied.filter((s) => !/(^|\/)(package\.json|package-lock\.json|\.npmrc)$/.test(s));
    if (notManifests.length > 0) {
      problems.push(
        `${label} stage copies ${notManifests.join(', ')} before installing (breaks layer caching)`,
      );
    }
    for (const manifest of manifests) {
      if (!copied.includes(manifest))
        problems.push(`${label} stage does not copy ${manifest} (npm needs every workspace)`);
    }
  }

  // The runtime stage: node_modules only from a production install, from which the toolchain is gone.
  if (final.image !== expect.runtimeImage)
    problems.push(`final stage is FROM ${final.image}, expected ${expect.runtimeImage}`);
  if (final.instructions.some(installs)) problems.push('the final stage installs packages itself');
  const finalCopies = final.instructions.filter((i) => i.keyword === 'COPY').map(parseCopy);
  const held = finalCopies.flatMap((c) => {
    const intoDirectory = c.destination.endsWith('/') || c.destination === '.' || c.sources.length > 1;
    return c.sources.map((source) => ({
      copy: c,
      source,
      path: imagePath(c.destination, source, intoDirectory),
    }));
  });
  const lockfile = readFileSync(join(expect.repoRoot, 'package-lock.json'), 'utf8');
  for (const { copy, source, path } of held) {
    if (copy.from === undefined) continue;
    const from = stageNamed(copy.from);
    if (!from) continue;
    const wholeApp = /^\/app\/?$/.test(source) || source.includes('node_modules');
    if (!wholeApp) {
      if (!/(^|\/)dist$/.test(path))
        problems.push(
          `line ${copy.line}: the final stage copies ${source} from ${copy.from}, not a dist/ folder`,
        );
      continue;
    }
    const install = from.instructions.find(installs);
    if (!install || !/--omit=dev\b/.test(install.args)) {
      problems.push(
        `line ${copy.line}: node_modules come from ${copy.from}, which does not npm ci --omit=dev`,
      );
      continue;
    }
    const removed = from.instructions
      .filter((i) => i.keyword === 'RUN')
      .flatMap((i) => removedModules(i.args));
    for (const name of toolchainKeptByOmitDev(lockfile)) {
      if (!removed.includes(name))
        problems.push(`${copy.from} stage keeps ${name} (npm ci --omit=dev installs it from this lockfile)`);
    }
  }
  const holds = (path: string) =>
    held.some((h) => h.path === path || path.startsWith(`${h.path}/`) || h.path === '.');
  for (const path of expect.mustCopy) {
    if (!held.some((h) => h.path === path)) problems.push(`final stage does not copy ${path}`);
  }
  for (const path of expect.mustNotCopy) {
    if (held.some((h) => h.path === path || h.path.startsWith(`${path}/`)))
      problems.push(`final stage copies ${path}, which this app does not need`);
  }
  const users = final.instructions
    .filter((i) => i.keyword === 'USER')
    .map((i) => i.args.split(':')[0]?.trim());
  const user = users[users.length - 1];
  if (user === undefined) problems.push('final stage has no USER (would run as root)');
  else if (user === 'root' || user === '0') problems.push(`final stage runs as ${user}`);
  const workdir = final.instructions.filter((i) => i.keyword === 'WORKDIR').pop()?.args;
  if (workdir !== '/app')
    problems.push(`final stage WORKDIR is ${workdir}, expected /app (configs use paths relative to it)`);
  const healthcheck = final.instructions.find((i) => i.keyword === 'HEALTHCHECK');
  if (!healthcheck) problems.push('final stage has no HEALTHCHECK');
  else if (!healthcheck.args.includes('/health/live'))
    problems.push('HEALTHCHECK does not call /health/live');
  const exposed = final.instructions
    .filter((i) => i.keyword === 'EXPOSE')
    .flatMap((i) => i.args.split(/\s+/));
  if (!exposed.some((p) => p.split('/')[0] === String(expect.port)))
    problems.push(`final stage does not EXPOSE ${expect.port}`);

  // The command: `node [--flags] <project>/dist/….js`, compiled in a build stage the final stage copies.
  const cmd = final.instructions.filter((i) => i.keyword === 'CMD').pop();
  const entrypoint = final.instructions.filter((i) => i.keyword === 'ENTRYPOINT').pop();
  const init = entrypoint ? (execForm(entrypoint.args)[0] ?? '') : '';
  const command = [...(entrypoint ? execForm(entrypoint.args) : []), ...(cmd ? execForm(cmd.args) : [])];
  const nodeAt = command.findIndex((word) => word === 'node' || word.endsWith('/node'));
  const script = nodeAt < 0 ? undefined : command.slice(nodeAt + 1).find((word) => !word.startsWith('-'));
  const nodeFlags = nodeAt < 0 ? [] : command.slice(nodeAt + 1, command.indexOf(script ?? '', nodeAt));
  if (script !== expect.main || !/\/dist\/.+\.js$/.test(script)) {
    problems.push(`the image does not run \`node ${expect.main}\` (got: ${command.join(' ')})`);
  }
  if (nodeFlags.some((flag) => /^--(import|loader|require)$|^-r$|tsx|ts-node/.test(flag)))
    problems.push(`node runs with a loader (${nodeFlags.join(' ')}): the image must run compiled JavaScript`);
  const project = projectOf(expect.main);
  const source = sourceOf(expect.main);
  if (!source || !existsSync(join(expect.repoRoot, source)))
    problems.push(`${expect.main}: its source ${source} does not exist`);
  if (!holds(expect.main)) problems.push(`final stage does not copy ${expect.main}`);
  const distCopy = held.find((h) => project && h.path === `${project}/dist`);
  const builder = stageNamed(distCopy?.copy.from);
  if (!builder) problems.push(`final stage does not copy ${project}/dist from a build stage`);
  else if (
    !builder.instructions.some(
      (i) => i.keyword === 'RUN' && i.args.includes(`tsc -p ${project}/tsconfig.build.json`),
    )
  ) {
    problems.push(
      `${builder.name ?? builder.index} stage does not compile ${project} (tsc -p ${project}/tsconfig.build.json)`,
    );
  }
  if (entrypoint && !/(tini|dumb-init)$/.test(init))
    problems.push(`ENTRYPOINT ${init} is not tini or dumb-init`);
  if (!entrypoint && !cmd?.args.trim().startsWith('['))
    problems.push('CMD in shell form: node would not be PID 1 nor get SIGTERM');
  if (/tini|dumb-init/.test(init)) {
    const tool = init.split('/').pop() ?? '';
    if (!final.instructions.some((i) => i.keyword === 'RUN' && i.args.includes(tool))) {
      problems.push(`ENTRYPOINT uses ${tool} but the final stage does not install it`);
    }
  }
  return problems;
}

/** Paths (relative to WORKDIR /app) the final stage copies, from the context or an earlier stage. */
function copiedIntoImage(text: string): string[] {
  const { stages } = parseDockerfile(text);
  const final = stages[stages.length - 1];
  return (final?.instructions ?? [])
    .filter((i) => i.keyword === 'COPY')
    .map(parseCopy)
    .flatMap((c) => {
      const intoDirectory = c.destination.endsWith('/') || c.destination === '.' || c.sources.length > 1;
      return c.sources.map((source) => imagePath(c.destination, source, intoDirectory));
    })
    .filter((path) => path !== '.');
}

/**
 * Each script path (a .ts/.js argument) exists in the repository (a compiled `dist/….js` by its
 * `src/….ts`) and inside a directory the image copies.
 */
export function checkScriptsInImage(
  text: string,
  repoRoot: string,
  scripts: { path: string; where: string }[],
): string[] {
  const copied = copiedIntoImage(text);
  const problems: string[] = [];
  for (const { path, where } of scripts) {
    const normalized = posix.normalize(path);
    const inRepository = sourceOf(normalized) ?? normalized;
    if (!existsSync(join(repoRoot, inRepository)))
      problems.push(`${where}: ${path} does not exist in the repository (${inRepository})`);
    if (!copied.some((dir) => normalized === dir || normalized.startsWith(`${dir}/`))) {
      problems.push(`${where}: ${path} is not copied into the image`);
    }
  }
  return problems;
}

/** The scripts the stdio servers of a config run (their .ts/.js arguments). */
export function stdioScripts(config: SwitchyardConfig, source: string): { path: string; where: string }[] {
  return Object.entries(config.servers).flatMap(([name, server]) =>
    server.transport === 'stdio'
      ? server.args
          .filter((a) => /\.m?[jt]s$/.test(a))
          .map((path) => ({ path, where: `${source} server ${name}` }))
      : [],
  );
}

// ---- compose ------------------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: (string | { type?: string; source?: string; target?: string })[];
  ports?: (string | number | { target?: number; published?: string | number })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: unknown };
  deploy?: { replicas?: number };
  stop_grace_period?: string;
}

interface ComposeFile {
  services?: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Compose-style interpolation with no variables set: `${X:-default}` → default, `${X}` → ''. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g,
    (_m, _name: string, fallback?: string) => fallback ?? '',
  );
}

function environment(service: ComposeService): Record<string, string> {
  const env = service.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const [key = '', ...rest] = entry.split('=');
        return [key, interpolate(rest.join('='))];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(env ?? {}).map(([k, v]) => [k, interpolate(v === null ? '' : String(v))]),
  );
}

function mounts(service: ComposeService): { source: string; target: string }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === 'string') {
      const [source = '', target = ''] = interpolate(volume).split(':');
      return { source, target };
    }
    return { source: volume.source ?? '', target: volume.target ?? '' };
  });
}

function seconds(duration: string | undefined): number {
  if (duration === undefined) return 10; // compose default
  let total = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(amount) * ({ ms: 0.001, s: 1, m: 60, h: 3600 }[unit as 'ms' | 's' | 'm' | 'h'] ?? 0);
  }
  return total;
}

export function parseCompose(text: string): ComposeFile {
  // Compose honours YAML merge keys (`<<: *anchor`).
  return parseYaml(text, { merge: true }) as ComposeFile;
}

export const REQUIRED_SERVICES = ['redis', 'postgres', 'jaeger', 'orchestrator', 'tool-worker'] as const;

export function checkCompose(text: string, composeDir: string, repoRoot: string): string[] {
  const problems: string[] = [];
  let compose: ComposeFile;
  try {
    compose = parseCompose(text);
  } catch (error) {
    return [`compose file is not valid YAML: ${(error as Error).message}`];
  }
  const services = compose.services ?? {};
  for (const name of REQUIRED_SERVICES) if (!services[name]) problems.push(`no ${name} service`);
  const service = (name: string): ComposeService => services[name] ?? {};
  const hostOf = (url: string | undefined) => {
    try {
      return url ? new URL(url).hostname : undefined;
    } catch {
      return undefined;
    }
  };

  const redis = service('redis');
  const redisCommand = Array.isArray(redis.command) ? redis.command.join(' ') : (redis.command ?? '');
  if (!/^redis:7/.test(redis.image ?? '')) problems.push(`redis image is ${redis.image}, expected redis:7`);
  if (!/--appendonly\s+yes/.test(redisCommand)) problems.push('redis does not run with --appendonly yes');
  if (!mounts(redis).some((m) => m.target === '/data')) problems.push('redis /data is not on a volume');
  const postgres = service('postgres');
  if (!/^postgres:16/.test(postgres.image ?? ''))
    problems.push(`postgres image is ${postgres.image}, expected postgres:16`);
  if (!mounts(postgres).some((m) => m.target === '/var/lib/postgresql/data'))
    problems.push('postgres data is not on a volume');
  const jaeger = service('jaeger');
  if (!/^jaegertracing\/all-in-one/.test(jaeger.image ?? ''))
    problems.push('jaeger is not jaegertracing/all-in-one');
  if (environment(jaeger).COLLECTOR_OTLP_ENABLED !== 'true')
    problems.push('jaeger without COLLECTOR_OTLP_ENABLED=true');
  const jaegerPorts = (jaeger.ports ?? []).map(String).join(' ');
  for (const port of ['4318', '16686'])
    if (!jaegerPorts.includes(port)) problems.push(`jaeger does not publish ${port}`);

  const declaredVolumes = Object.keys(compose.volumes ?? {});
  for (const [name, svc] of Object.entries(services)) {
    for (const { source } of mounts(svc)) {
      const named = source !== '' && !source.startsWith('.') && !source.startsWith('/');
      if (named && !declaredVolumes.includes(source))
        problems.push(`${name}: volume ${source} is not declared`);
    }
    const dependencies = svc.depends_on;
    if (dependencies && !Array.isArray(dependencies)) {
      for (const [dependency, { condition }] of Object.entries(dependencies)) {
        if (!services[dependency]) problems.push(`${name} depends on unknown service ${dependency}`);
        if (condition === 'service_healthy' && !services[dependency]?.healthcheck) {
          problems.push(`${name} waits for ${dependency} to be healthy, but it has no healthcheck`);
        }
      }
    }
  }

  const apps = { orchestrator: 'Dockerfile.orchestrator', 'tool-worker': 'Dockerfile.tool-worker' } as const;
  for (const [name, dockerfile] of Object.entries(apps)) {
    const svc = service(name);
    const build = typeof svc.build === 'string' ? { context: svc.build } : (svc.build ?? {});
    const context = resolve(composeDir, build.context ?? '.');
    if (context !== resolve(repoRoot))
      problems.push(`${name}: build context ${build.context} is not the repository root`);
    const file = resolve(context, build.dockerfile ?? 'Dockerfile');
    if (!existsSync(file) || !file.endsWith(dockerfile))
      problems.push(`${name}: dockerfile ${build.dockerfile} is not ${dockerfile}`);

    const env = environment(svc);
    const needsHealthy = name === 'orchestrator' ? ['redis', 'postgres'] : ['redis'];
    const dependencies = Array.isArray(svc.depends_on) ? {} : (svc.depends_on ?? {});
    for (const dependency of needsHealthy) {
      if (dependencies[dependency]?.condition !== 'service_healthy')
        problems.push(`${name} does not wait for ${dependency} to be healthy`);
    }
    const redisHost = hostOf(env.REDIS_URL);
    if (!redisHost || !services[redisHost])
      problems.push(`${name}: REDIS_URL ${env.REDIS_URL} does not point at a compose service`);
    const otlpHost = hostOf(env.OTEL_EXPORTER_OTLP_ENDPOINT);
    if (otlpHost !== 'jaeger') problems.push(`${name}: OTEL_EXPORTER_OTLP_ENDPOINT does not point at jaeger`);

    const configPath = env.SWITCHYARD_CONFIG;
    const mount = mounts(svc).find((m) => m.target === configPath);
    if (!configPath || !mount) {
      problems.push(`${name}: SWITCHYARD_CONFIG ${configPath} is not a mounted file`);
      continue;
    }
    const source = resolve(composeDir, mount.source);
    if (!existsSync(source) || !statSync(source).isFile()) {
      problems.push(`${name}: config ${relative(repoRoot, source)} does not exist`);
      continue;
    }
    let config: SwitchyardConfig;
    try {
      config = parseWithPlaceholders(readFileSync(source, 'utf8'));
    } catch (error) {
      problems.push(`${name}: ${relative(repoRoot, source)}: ${(error as Error).message}`);
      continue;
    }
    if (name === 'orchestrator') {
      const database = hostOf(env.DATABASE_URL);
      if (!database || !services[database])
        problems.push(`orchestrator: DATABASE_URL does not point at a compose service`);
      else if (env.DATABASE_URL) {
        const url = new URL(env.DATABASE_URL);
        const pg = environment(service(database));
        if (
          url.username !== (pg.POSTGRES_USER ?? 'postgres') ||
          decodeURIComponent(url.password) !== (pg.POSTGRES_PASSWORD ?? '')
        ) {
          problems.push('orchestrator: DATABASE_URL credentials do not match the postgres service');
        }
      }
      if (!env.JAEGER_UI_URL) problems.push('orchestrator: JAEGER_UI_URL is not set');
      const port = env.PORT ?? '3000';
      if (!(svc.ports ?? []).map(String).some((p) => p.endsWith(`:${port}`) || p === port)) {
        problems.push(`orchestrator: container port ${port} is not published`);
      }
    } else {
      if ((svc.deploy?.replicas ?? 1) < 2)
        problems.push(`tool-worker: deploy.replicas is ${svc.deploy?.replicas ?? 1}, expected >= 2`);
      const longest = Math.max(0, ...Object.keys(config.servers).map((s) => hardTimeoutMs(config, s)));
      const needed = (longest + config.worker.shutdownGraceMs) / 1000;
      const grace = seconds(svc.stop_grace_period);
      if (grace <= needed) {
        problems.push(
          `tool-worker: stop_grace_period ${grace}s is not longer than the longest tool call + shutdownGraceMs (${needed}s)`,
        );
      }
    }
  }
  return problems;
}
