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
  /** The app's entry point, relative to the repository root (and to WORKDIR /app). */
  main: string;
  port: number;
  /** Paths the final stage must copy from the build context. */
  mustCopy: string[];
  /** Paths the final stage must not copy (what the other app needs). */
  mustNotCopy: string[];
}

const NPM_INSTALL = /\bnpm (ci|install|i)\b/;

export function checkDockerfile(text: string, expect: DockerfileExpectations): string[] {
  const problems: string[] = [];
  const { stages } = parseDockerfile(text);
  const final = stages[stages.length - 1];
  if (!final || stages.length < 2) return ['expected a multi-stage build (a deps stage and a runtime stage)'];
  const ignored = dockerignoreMatcher(expect.dockerignore);

  // Every COPY from the context names paths that exist and are not excluded from the context.
  for (const stage of stages) {
    for (const instruction of stage.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
      const copy = parseCopy(instruction);
      if (copy.from !== undefined) {
        const earlier = stages
          .slice(0, stage.index)
          .some((s) => s.name === copy.from || String(s.index) === copy.from);
        if (!earlier) problems.push(`line ${copy.line}: COPY --from=${copy.from} is not an earlier stage`);
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

  // The deps stage installs production dependencies from the lockfile, copying only manifests first.
  const installs = (i: Instruction) => i.keyword === 'RUN' && NPM_INSTALL.test(i.args);
  const deps = stages.find((s) => s.instructions.some(installs));
  if (!deps) problems.push('no stage installs dependencies (npm ci / npm install)');
  else {
    const install = deps.instructions.findIndex(installs);
    const installArgs = deps.instructions[install]?.args ?? '';
    if (!/--omit=dev\b/.test(installArgs)) problems.push('the npm install does not --omit=dev');
    if (/--no-package-lock|--package-lock=false/.test(installArgs))
      problems.push('the npm install ignores the lockfile');
    const copied = deps.instructions
      .slice(0, install)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((i) => parseCopy(i).sources);
    const notManifests = copied.filter((s) => !/(^|\/)(package\.json|package-lock\.json|\.npmrc)$/.test(s));
    if (notManifests.length > 0) {
      problems.push(`deps stage copies ${notManifests.join(', ')} before installing (breaks layer caching)`);
    }
    const manifests = [
      'package.json',
      'package-lock.json',
      ...workspaceDirs(expect.repoRoot).map((d) => `${d}/package.json`),
    ];
    for (const manifest of manifests) {
      if (!copied.includes(manifest))
        problems.push(`deps stage does not copy ${manifest} (npm needs every workspace)`);
    }
  }

  // The runtime stage.
  if (final.image !== expect.runtimeImage)
    problems.push(`final stage is FROM ${final.image}, expected ${expect.runtimeImage}`);
  const finalCopies = final.instructions.filter((i) => i.keyword === 'COPY').map(parseCopy);
  const fromContext = finalCopies.filter((c) => c.from === undefined).flatMap((c) => c.sources);
  for (const path of expect.mustCopy) {
    if (!fromContext.includes(path)) problems.push(`final stage does not copy ${path}`);
  }
  for (const path of expect.mustNotCopy) {
    if (fromContext.some((s) => s === path || s.startsWith(`${path}/`)))
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

  const cmd = final.instructions.filter((i) => i.keyword === 'CMD').pop();
  const entrypoint = final.instructions.filter((i) => i.keyword === 'ENTRYPOINT').pop();
  const command = [...(entrypoint ? execForm(entrypoint.args) : []), ...(cmd ? execForm(cmd.args) : [])];
  const main = command.indexOf(expect.main);
  if (
    main < 0 ||
    command[main - 1] !== 'tsx' ||
    command[main - 2] !== '--import' ||
    command[main - 3] !== 'node'
  ) {
    problems.push(`the image does not run \`node --import tsx ${expect.main}\` (got: ${command.join(' ')})`);
  }
  if (!existsSync(join(expect.repoRoot, expect.main))) problems.push(`${expect.main} does not exist`);
  if (!fromContext.some((s) => expect.main.startsWith(`${s}/`)))
    problems.push(`final stage does not copy ${expect.main}`);
  const init = entrypoint ? (execForm(entrypoint.args)[0] ?? '') : '';
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

/** Paths (relative to WORKDIR /app) the final stage copies from the build context. */
function copiedIntoImage(text: string): string[] {
  const { stages } = parseDockerfile(text);
  const final = stages[stages.length - 1];
  return (final?.instructions ?? [])
    .filter((i) => i.keyword === 'COPY')
    .map(parseCopy)
    .filter((c) => c.from === undefined)
    .flatMap((c) => {
      const destination = c.destination.replace(/^\/app(\/|$)/, './');
      const intoDirectory = destination.endsWith('/') || destination === '.' || c.sources.length > 1;
      return c.sources.map((source) =>
        posix.normalize(intoDirectory ? posix.join(destination, posix.basename(source)) : destination),
      );
    });
}

/** Each script path (a .ts/.js argument) exists in the repository and inside a directory the image copies. */
export function checkScriptsInImage(
  text: string,
  repoRoot: string,
  scripts: { path: string; where: string }[],
): string[] {
  const copied = copiedIntoImage(text);
  const problems: string[] = [];
  for (const { path, where } of scripts) {
    const normalized = posix.normalize(path);
    if (!existsSync(join(repoRoot, normalized)))
      problems.push(`${where}: ${path} does not exist in the repository`);
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
