/**
 * Invariants of a rendered kustomization (base or overlay). Every check returns the list of problems it
 * found (empty = fine), so tests can assert `[]` on the real manifests and a specific problem on a
 * deliberately broken copy.
 */
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { ITriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import {
  type BackendChoice,
  chooseBackend,
  parseConfig,
  queueSchemaName,
  type SwitchyardConfig,
  toolQueueName,
} from '@switchyard/contracts';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from './models.ts';

export interface Build {
  name: string;
  objects: KubeObject[];
}

export interface BuildOptions {
  /** Secrets the workloads use that this build deliberately does not render (created out of band). */
  externalSecrets: readonly string[];
  /**
   * How the worker groups are scaled: `keda` (a ScaledObject each, the kustomize tree) or `fixed` (the
   * chart with autoscaling off: no ScaledObject, a replica count of at least 1). Default `keda`.
   */
  workerScaling?: 'keda' | 'fixed';
}

export const COMPONENT = 'app.kubernetes.io/component';
/** Groups of servers whose concurrency is all 1 gain nothing from more workers than this (failover). */
export const SERIALIZED_MAX_REPLICAS = 3;
const QUEUE_STATES_FOR_BACKLOG = ['waiting', 'prioritized', 'delayed'] as const;
/** The same backlog in BullMQ's PostgreSQL `job` table, where a prioritized job is `waiting` with a priority. */
const JOB_STATES_FOR_BACKLOG = ['waiting', 'delayed'] as const;
/** Every value of BullMQ's `job_state` enum: any other name in the query makes PostgreSQL refuse it. */
const JOB_STATES = ['waiting', 'active', 'completed', 'failed', 'delayed', 'waiting-children'] as const;
/** Environment variables that name a Redis: none may be left on a PostgreSQL-only build. */
const REDIS_VARIABLES = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS', 'REDIS_ADDRESS'] as const;
const DEFAULT_WORKER_HTTP_PORT = 9464;
const DEFAULT_ORCHESTRATOR_PORT = 3000;

/** Metadata keys KEDA's scalers read (KEDA ignores unknown ones, so a typo silently disables a trigger). */
const KNOWN_TRIGGER_METADATA: Record<string, readonly string[]> = {
  redis: [
    'address',
    'addressFromEnv',
    'host',
    'hostFromEnv',
    'port',
    'portFromEnv',
    'username',
    'usernameFromEnv',
    'password',
    'passwordFromEnv',
    'listName',
    'listLength',
    'activationListLength',
    'databaseIndex',
    'enableTLS',
    'unsafeSsl',
  ],
  prometheus: [
    'serverAddress',
    'query',
    'threshold',
    'activationThreshold',
    'namespace',
    'customHeaders',
    'ignoreNullValues',
    'queryParameters',
    'unsafeSsl',
    'authModes',
  ],
  postgresql: [
    'host',
    'port',
    'userName',
    'dbName',
    'sslmode',
    'passwordFromEnv',
    'connectionFromEnv',
    'query',
    'targetQueryValue',
    'activationTargetQueryValue',
  ],
};

// ---- lookups ------------------------------------------------------------------------------------

function ofKind<T>(build: Build, apiVersion: string, kind: string): T[] {
  return build.objects.filter((o) => o.apiVersion === apiVersion && o.kind === kind) as unknown as T[];
}

export const deployments = (build: Build) => ofKind<IDeployment>(build, 'apps/v1', 'Deployment');
export const statefulSets = (build: Build) => ofKind<IStatefulSet>(build, 'apps/v1', 'StatefulSet');
export const services = (build: Build) => ofKind<IService>(build, 'v1', 'Service');
export const configMaps = (build: Build) => ofKind<IConfigMap>(build, 'v1', 'ConfigMap');
export const secrets = (build: Build) => ofKind<ISecret>(build, 'v1', 'Secret');
export const pdbs = (build: Build) => ofKind<IPodDisruptionBudget>(build, 'policy/v1', 'PodDisruptionBudget');
export const hpas = (build: Build) =>
  ofKind<IHorizontalPodAutoscaler>(build, 'autoscaling/v2', 'HorizontalPodAutoscaler');
export const scaledObjects = (build: Build) =>
  ofKind<IScaledObject>(build, 'keda.sh/v1alpha1', 'ScaledObject');
export const triggerAuthentications = (build: Build) =>
  ofKind<ITriggerAuthentication>(build, 'keda.sh/v1alpha1', 'TriggerAuthentication');
export const jobs = (build: Build) => ofKind<IJob>(build, 'batch/v1', 'Job');

type Workload = IDeployment | IStatefulSet | IJob;

const nameOf = (object: { metadata?: { name?: string } }) => object.metadata?.name ?? '?';

export function orchestrators(build: Build): IDeployment[] {
  return deployments(build).filter((d) => podLabels(d)[COMPONENT] === 'orchestrator');
}

export function workers(build: Build): IDeployment[] {
  return deployments(build).filter((d) => podLabels(d)[COMPONENT] === 'tool-worker');
}

function podLabels(workload: Workload): Record<string, string> {
  return workload.spec?.template.metadata?.labels ?? {};
}

function podSpec(workload: Workload): IPodSpec | undefined {
  return workload.spec?.template.spec;
}

function allContainers(workload: Workload): IContainer[] {
  const spec = podSpec(workload);
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
}

/** The app container of an orchestrator or worker pod (not a sidecar). */
export function appContainer(workload: IDeployment): IContainer | undefined {
  const containers = podSpec(workload)?.containers ?? [];
  return containers.find((c) => c.name === 'orchestrator' || c.name === 'tool-worker') ?? containers[0];
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

function decode(secret: ISecret): Record<string, string> {
  const values: Record<string, string> = { ...(secret.stringData ?? {}) };
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    values[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return values;
}

// ---- environment --------------------------------------------------------------------------------

export interface ResolvedEnv {
  /** Variables with a known value (fieldRef values are stand-ins). */
  values: Map<string, string>;
  /** Variables set from an external Secret: present at run time, value unknown here. */
  unknown: Set<string>;
  /** External Secrets loaded whole with envFrom: any variable may come from them. */
  externalEnvFrom: string[];
  problems: string[];
}

/** What a container's environment will hold, resolved against the ConfigMaps and Secrets of the build. */
export function resolveEnv(build: Build, container: IContainer, options: BuildOptions): ResolvedEnv {
  const env: ResolvedEnv = { values: new Map(), unknown: new Set(), externalEnvFrom: [], problems: [] };
  const where = `container ${container.name}`;
  const findSecret = (name: string) => secrets(build).find((s) => nameOf(s) === name);
  const findConfigMap = (name: string) => configMaps(build).find((c) => nameOf(c) === name);
  const external = (name: string) => options.externalSecrets.includes(name);

  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    if (source.configMapRef) {
      const map = findConfigMap(source.configMapRef.name ?? '');
      if (map) for (const [k, v] of Object.entries(map.data ?? {})) env.values.set(prefix + k, v);
      else if (!source.configMapRef.optional)
        env.problems.push(`${where}: envFrom ConfigMap ${source.configMapRef.name} is not in the build`);
    }
    if (source.secretRef) {
      const name = source.secretRef.name ?? '';
      const secret = findSecret(name);
      if (secret) for (const [k, v] of Object.entries(decode(secret))) env.values.set(prefix + k, v);
      else if (external(name)) env.externalEnvFrom.push(name);
      else if (!source.secretRef.optional)
        env.problems.push(`${where}: envFrom Secret ${name} is not in the build`);
    }
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (!from) {
      env.values.set(variable.name, variable.value ?? '');
    } else if (from.fieldRef) {
      env.values.set(variable.name, `fieldref-${from.fieldRef.fieldPath}`);
    } else if (from.secretKeyRef) {
      const { name = '', key, optional } = from.secretKeyRef;
      const secret = findSecret(name);
      if (secret) {
        const value = decode(secret)[key];
        if (value !== undefined) env.values.set(variable.name, value);
        else if (!optional)
          env.problems.push(`${where}: ${variable.name} refers to missing key ${key} of Secret ${name}`);
      } else if (external(name)) {
        env.unknown.add(variable.name);
      } else if (!optional) {
        env.problems.push(`${where}: ${variable.name} refers to Secret ${name}, which is not in the build`);
      }
    } else if (from.configMapKeyRef) {
      const { name = '', key, optional } = from.configMapKeyRef;
      const value = findConfigMap(name)?.data?.[key];
      if (value !== undefined) env.values.set(variable.name, value);
      else if (!optional)
        env.problems.push(`${where}: ${variable.name} refers to missing ConfigMap key ${name}/${key}`);
    } else {
      env.unknown.add(variable.name);
    }
  }
  return env;
}

// ---- the Switchyard config ----------------------------------------------------------------------

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` references without a default anywhere in the parsed config's values. */
export function requiredVariables(raw: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const match of value.matchAll(PLACEHOLDER))
        if (match[2] === undefined && match[1]) found.add(match[1]);
    } else if (Array.isArray(value)) {
      value.forEach(walk);
    } else if (value !== null && typeof value === 'object') {
      Object.values(value).forEach(walk);
    }
  };
  walk(raw);
  return [...found].sort();
}

/** A stand-in long enough for every constrained value (team API keys need 16 characters). */
export const PLACEHOLDER_VALUE = 'placeholder-value-0123456789abcdef';

export interface MountedConfig {
  configMap: string;
  key: string;
  text: string;
}

/** The config file a container reads: SWITCHYARD_CONFIG, followed through its volume mount to a ConfigMap. */
export function mountedConfig(
  build: Build,
  workload: IDeployment,
  container: IContainer,
  env: ResolvedEnv,
): MountedConfig | string {
  const path = env.values.get('SWITCHYARD_CONFIG') ?? './switchyard.yaml';
  if (!path.startsWith('/'))
    return `SWITCHYARD_CONFIG is ${path}, not an absolute path into a mounted ConfigMap`;
  const mount = (container.volumeMounts ?? [])
    .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  if (!mount) return `SWITCHYARD_CONFIG ${path} is not on any volume mount`;
  const volume = podSpec(workload)?.volumes?.find((v) => v.name === mount.name);
  if (!volume?.configMap?.name)
    return `SWITCHYARD_CONFIG ${path} is on volume ${mount.name}, which is not a ConfigMap`;
  const key = mount.subPath ?? path.slice(mount.mountPath.replace(/\/$/, '').length + 1);
  const item = volume.configMap.items?.find((i) => i.path === key);
  const dataKey = item ? item.key : key;
  const map = configMaps(build).find((c) => nameOf(c) === volume.configMap?.name);
  const text = map?.data?.[dataKey];
  if (text === undefined)
    return `SWITCHYARD_CONFIG ${path}: ConfigMap ${volume.configMap.name} has no key ${dataKey}`;
  return { configMap: volume.configMap.name, key: dataKey, text };
}

/** Parses a config text with `parseConfig`, every `${VAR}` without default given a placeholder. */
export function parseWithPlaceholders(text: string): SwitchyardConfig {
  const raw: unknown = parseYaml(text);
  const env = Object.fromEntries(requiredVariables(raw).map((name) => [name, PLACEHOLDER_VALUE]));
  return parseConfig(raw, env);
}

/** The script paths (.js/.ts arguments) the worker pods' containers and sidecars run. */
export function containerScripts(build: Build): { path: string; where: string }[] {
  return workers(build).flatMap((worker) =>
    allContainers(worker).flatMap((container) =>
      [...(container.command ?? []), ...(container.args ?? [])]
        .filter((arg) => /\.m?[jt]s$/.test(arg))
        .map((path) => ({ path, where: `${nameOf(worker)}/${container.name}` })),
    ),
  );
}

export interface AppContext {
  config: SwitchyardConfig;
  prefix: string;
}

/**
 * The config every app container mounts, parsed (placeholders for `${VAR}`s) and the BullMQ prefix they
 * share. Problems: no app, different configs or prefixes between containers, a broken config.
 */
export function appContext(
  build: Build,
  options: BuildOptions,
): { context?: AppContext; problems: string[] } {
  const problems: string[] = [];
  const apps = [...orchestrators(build), ...workers(build)];
  if (apps.length === 0) return { problems: ['no orchestrator or tool-worker Deployment'] };
  let first: { mounted: MountedConfig; prefix: string; from: string } | undefined;
  for (const app of apps) {
    const container = appContainer(app);
    if (!container) {
      problems.push(`Deployment ${nameOf(app)}: no container`);
      continue;
    }
    const env = resolveEnv(build, container, options);
    const mounted = mountedConfig(build, app, container, env);
    if (typeof mounted === 'string') {
      problems.push(`Deployment ${nameOf(app)}: ${mounted}`);
      continue;
    }
    const prefix = env.values.get('SWITCHYARD_PREFIX') ?? 'switchyard';
    if (!first) {
      first = { mounted, prefix, from: nameOf(app) };
    } else {
      if (mounted.text !== first.mounted.text) {
        problems.push(`Deployment ${nameOf(app)} mounts a different config than ${first.from}`);
      }
      if (prefix !== first.prefix) {
        problems.push(
          `Deployment ${nameOf(app)} uses SWITCHYARD_PREFIX ${prefix}, ${first.from} uses ${first.prefix}: they would not share queues`,
        );
      }
    }
  }
  if (!first) return { problems };
  try {
    return { context: { config: parseWithPlaceholders(first.mounted.text), prefix: first.prefix }, problems };
  } catch (error) {
    problems.push(
      `ConfigMap ${first.mounted.configMap} key ${first.mounted.key}: ${(error as Error).message}`,
    );
    return { problems };
  }
}

/**
 * Every app container can start with the config it mounts: parsed with `parseConfig` against the
 * container's own resolved environment, so a `${VAR}` no Secret/ConfigMap provides fails here.
 */
export function checkConfigAgainstEnv(build: Build, options: BuildOptions): string[] {
  const problems: string[] = [];
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const container = appContainer(app);
    if (!container) continue;
    const env = resolveEnv(build, container, options);
    problems.push(...env.problems.map((p) => `Deployment ${nameOf(app)}: ${p}`));
    const mounted = mountedConfig(build, app, container, env);
    if (typeof mounted === 'string') continue; // reported by appContext
    const raw: unknown = parseYaml(mounted.text);
    const runtimeEnv: NodeJS.ProcessEnv = Object.fromEntries(env.values);
    for (const name of requiredVariables(raw)) {
      if (env.values.has(name)) continue;
      // Present at run time but unknown here (external Secret): its value is the operator's business.
      if (env.unknown.has(name) || env.externalEnvFrom.length > 0) runtimeEnv[name] = PLACEHOLDER_VALUE;
    }
    try {
      parseConfig(raw, runtimeEnv);
    } catch (error) {
      problems.push(
        `Deployment ${nameOf(app)}: config does not load with the container's env: ${(error as Error).message}`,
      );
    }
  }
  return problems;
}

/** Longest a single attempt of a call may run: maxTimeoutMs, default 4 × timeoutMs (as the worker does). */
export function hardTimeoutMs(config: SwitchyardConfig, server: string): number {
  const settings = config.servers[server];
  if (!settings) return 0;
  return settings.maxTimeoutMs ?? settings.timeoutMs * 4;
}

// ---- backend ------------------------------------------------------------------------------------

/** The backend an app container picks at start-up (store/backend-choice.ts), from its resolved env. */
export function backendOf(env: ResolvedEnv, config: SwitchyardConfig): BackendChoice {
  // A variable from an external Secret is set at run time: the rule only asks whether it is set.
  const runtime: NodeJS.ProcessEnv = Object.fromEntries(env.values);
  for (const name of env.unknown) runtime[name] = PLACEHOLDER_VALUE;
  return chooseBackend(runtime, config.backend);
}

/**
 * Every app picks the same backend (an orchestrator on PostgreSQL and workers on Redis would never meet),
 * and on postgres every one of them, workers included, reads DATABASE_URL, the same one.
 */
export function checkBackends(build: Build, context: AppContext, options: BuildOptions): string[] {
  const problems: string[] = [];
  const picked: { app: string; choice: BackendChoice }[] = [];
  const databases = new Map<string, string>();
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const container = appContainer(app);
    if (!container) continue;
    const env = resolveEnv(build, container, options);
    let choice: BackendChoice;
    try {
      choice = backendOf(env, context.config);
    } catch (error) {
      problems.push(`Deployment ${nameOf(app)}: ${(error as Error).message}`);
      continue;
    }
    picked.push({ app: nameOf(app), choice });
    if (choice.backend !== 'postgres') continue;
    const url = env.values.get('DATABASE_URL');
    if (url !== undefined) databases.set(nameOf(app), url);
    else if (!env.unknown.has('DATABASE_URL')) {
      problems.push(
        `Deployment ${nameOf(app)}: backend postgres without DATABASE_URL (its queues would be looked for on 127.0.0.1)`,
      );
    }
  }
  if (new Set(picked.map(({ choice }) => choice.backend)).size > 1) {
    const list = picked.map(({ app, choice }) => `${app}: ${choice.backend} (${choice.reason})`);
    problems.push(`the apps pick different backends: ${list.join('; ')}`);
  }
  if (new Set(databases.values()).size > 1) {
    problems.push(
      `the apps on postgres read different DATABASE_URLs (${[...databases.keys()].join(', ')}): they would not share queues`,
    );
  }
  return problems;
}

// ---- references ---------------------------------------------------------------------------------

/** Every name a workload, KEDA object or policy refers to exists in the build (or is declared external). */
export function checkReferences(build: Build, options: BuildOptions): string[] {
  const problems: string[] = [];
  const has = (kind: string, name: string) =>
    build.objects.some((o) => o.kind === kind && nameOf(o) === name);
  const secret = (name: string, where: string, optional = false) => {
    if (has('Secret', name) || optional) return;
    if (!options.externalSecrets.includes(name))
      problems.push(`${where}: Secret ${name} is not in the build`);
  };
  for (const name of options.externalSecrets) {
    if (has('Secret', name))
      problems.push(`Secret ${name} is managed outside this build but is rendered by it`);
  }
  for (const workload of [...deployments(build), ...statefulSets(build), ...jobs(build)]) {
    const where = `${workload.kind} ${nameOf(workload)}`;
    const account = podSpec(workload)?.serviceAccountName;
    if (account && !has('ServiceAccount', account))
      problems.push(`${where}: ServiceAccount ${account} is not in the build`);
    for (const volume of podSpec(workload)?.volumes ?? []) {
      if (volume.configMap && !has('ConfigMap', volume.configMap.name ?? '') && !volume.configMap.optional) {
        problems.push(
          `${where}: volume ${volume.name} uses ConfigMap ${volume.configMap.name}, not in the build`,
        );
      }
      if (volume.secret) secret(volume.secret.secretName ?? '', where, volume.secret.optional);
    }
    for (const container of allContainers(workload)) {
      for (const source of container.envFrom ?? []) {
        if (
          source.configMapRef &&
          !has('ConfigMap', source.configMapRef.name ?? '') &&
          !source.configMapRef.optional
        ) {
          problems.push(`${where}: envFrom ConfigMap ${source.configMapRef.name} is not in the build`);
        }
        if (source.secretRef) secret(source.secretRef.name ?? '', where, source.secretRef.optional);
      }
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom;
        if (ref?.secretKeyRef)
          secret(ref.secretKeyRef.name ?? '', `${where} env ${variable.name}`, ref.secretKeyRef.optional);
        if (
          ref?.configMapKeyRef &&
          !has('ConfigMap', ref.configMapKeyRef.name ?? '') &&
          !ref.configMapKeyRef.optional
        ) {
          problems.push(
            `${where} env ${variable.name}: ConfigMap ${ref.configMapKeyRef.name} is not in the build`,
          );
        }
      }
      for (const volumeMount of container.volumeMounts ?? []) {
        const declared =
          podSpec(workload)?.volumes?.some((v) => v.name === volumeMount.name) ||
          (workload.kind === 'StatefulSet' &&
            (workload as IStatefulSet).spec?.volumeClaimTemplates?.some(
              (t) => t.metadata?.name === volumeMount.name,
            ));
        if (!declared)
          problems.push(`${where}: container ${container.name} mounts undeclared volume ${volumeMount.name}`);
      }
    }
  }
  for (const auth of triggerAuthentications(build)) {
    for (const ref of auth.spec.secretTargetRef ?? []) {
      secret(ref.name, `TriggerAuthentication ${nameOf(auth)}`);
      const found = secrets(build).find((s) => nameOf(s) === ref.name);
      if (found && !(ref.key in decode(found))) {
        problems.push(`TriggerAuthentication ${nameOf(auth)}: Secret ${ref.name} has no key ${ref.key}`);
      }
    }
  }
  for (const scaled of scaledObjects(build)) {
    const target = scaled.spec.scaleTargetRef;
    if ((target.kind ?? 'Deployment') !== 'Deployment' || !has('Deployment', target.name)) {
      problems.push(
        `ScaledObject ${nameOf(scaled)}: target ${target.kind ?? 'Deployment'} ${target.name} is not in the build`,
      );
    }
    for (const trigger of scaled.spec.triggers) {
      const ref = trigger.authenticationRef;
      if (ref && !has(ref.kind ?? 'TriggerAuthentication', ref.name)) {
        problems.push(
          `ScaledObject ${nameOf(scaled)}: ${ref.kind ?? 'TriggerAuthentication'} ${ref.name} is not in the build`,
        );
      }
    }
  }
  for (const hpa of hpas(build)) {
    const target = hpa.spec?.scaleTargetRef;
    if (!target || !has(target.kind, target.name)) {
      problems.push(
        `HorizontalPodAutoscaler ${nameOf(hpa)}: target ${target?.kind} ${target?.name} is not in the build`,
      );
    }
  }
  const pods = [...deployments(build), ...statefulSets(build)].map(podLabels);
  for (const pdb of pdbs(build)) {
    if (!pods.some((labels) => matches(pdb.spec?.selector?.matchLabels, labels))) {
      problems.push(`PodDisruptionBudget ${nameOf(pdb)} selects no pods`);
    }
  }
  for (const service of services(build)) {
    if (service.spec?.type === 'ExternalName') continue;
    if (!pods.some((labels) => matches(service.spec?.selector, labels))) {
      problems.push(`Service ${nameOf(service)} selects no pods`);
    }
  }
  return problems;
}

// ---- workloads ----------------------------------------------------------------------------------

/** Selectors match templates; every container has requests and a memory limit and a pinned image. */
export function checkWorkloads(build: Build): string[] {
  const problems: string[] = [];
  for (const workload of [...deployments(build), ...statefulSets(build), ...jobs(build)]) {
    const where = `${workload.kind} ${nameOf(workload)}`;
    // A Job's selector is generated by the API server.
    if (workload.kind !== 'Job' && !matches(workload.spec?.selector?.matchLabels, podLabels(workload))) {
      problems.push(`${where}: selector does not match the pod template labels`);
    }
    for (const container of allContainers(workload)) {
      const resources = container.resources;
      if (!resources?.requests?.cpu || !resources.requests.memory) {
        problems.push(`${where}: container ${container.name} has no cpu/memory requests`);
      }
      if (!resources?.limits?.memory)
        problems.push(`${where}: container ${container.name} has no memory limit`);
      const image = container.image ?? '';
      const tag = image.includes('@') ? 'digest' : (/:([^/:]+)$/.exec(image)?.[1] ?? '');
      if (tag === '' || tag === 'latest')
        problems.push(`${where}: container ${container.name} image ${image} is not pinned`);
    }
  }
  return problems;
}

/** The app pods run as non-root without privilege escalation. */
export function checkAppSecurity(build: Build): string[] {
  const problems: string[] = [];
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const spec = podSpec(app);
    if (spec?.securityContext?.runAsNonRoot !== true)
      problems.push(`Deployment ${nameOf(app)}: runAsNonRoot is not true`);
    for (const container of allContainers(app)) {
      if (container.securityContext?.allowPrivilegeEscalation !== false) {
        problems.push(`Deployment ${nameOf(app)}: container ${container.name} allows privilege escalation`);
      }
    }
  }
  return problems;
}

function portNumber(container: IContainer, port: string | number | undefined): number | undefined {
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function checkProbe(
  where: string,
  container: IContainer,
  probe: IProbe | undefined,
  kind: string,
  path: string,
  port: number,
): string[] {
  if (!probe) return [`${where}: container ${container.name} has no ${kind}`];
  const get = probe.httpGet;
  if (!get) return [`${where}: ${kind} is not an httpGet probe`];
  const problems: string[] = [];
  if (get.path !== path) problems.push(`${where}: ${kind} path is ${get.path}, expected ${path}`);
  const actual = portNumber(container, get.port);
  if (actual !== port)
    problems.push(`${where}: ${kind} port resolves to ${actual}, the app listens on ${port}`);
  return problems;
}

function checkScrapeAnnotations(where: string, workload: IDeployment, port: number): string[] {
  const annotations = workload.spec?.template.metadata?.annotations ?? {};
  const problems: string[] = [];
  if (annotations['prometheus.io/scrape'] !== 'true')
    problems.push(`${where}: pod is not annotated prometheus.io/scrape: "true"`);
  if (annotations['prometheus.io/port'] !== String(port)) {
    problems.push(
      `${where}: prometheus.io/port is ${annotations['prometheus.io/port']}, metrics are on ${port}`,
    );
  }
  if ((annotations['prometheus.io/path'] ?? '/metrics') !== '/metrics')
    problems.push(`${where}: prometheus.io/path is not /metrics`);
  return problems;
}

function pdbFor(build: Build, workload: IDeployment): IPodDisruptionBudget | undefined {
  return pdbs(build).find((pdb) => matches(pdb.spec?.selector?.matchLabels, podLabels(workload)));
}

function hpasTargeting(build: Build, name: string): IHorizontalPodAutoscaler[] {
  return hpas(build).filter(
    (h) => h.spec?.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === name,
  );
}

// ---- orchestrator -------------------------------------------------------------------------------

export function checkOrchestrator(build: Build, options: BuildOptions): string[] {
  const found = orchestrators(build);
  if (found.length !== 1) return [`expected one orchestrator Deployment, found ${found.length}`];
  const [orchestrator] = found as [IDeployment];
  const where = `Deployment ${nameOf(orchestrator)}`;
  const container = appContainer(orchestrator);
  if (!container) return [`${where}: no container`];
  const problems: string[] = [];
  const env = resolveEnv(build, container, options);
  const port = Number(env.values.get('PORT') ?? DEFAULT_ORCHESTRATOR_PORT);

  const replicas = orchestrator.spec?.replicas ?? 1;
  if (replicas < 2) problems.push(`${where}: ${replicas} replica(s); run at least 2`);
  if (!container.ports?.some((p) => p.containerPort === port))
    problems.push(`${where}: no container port ${port}`);
  problems.push(
    ...checkProbe(where, container, container.readinessProbe, 'readinessProbe', '/health/ready', port),
  );
  problems.push(
    ...checkProbe(where, container, container.livenessProbe, 'livenessProbe', '/health/live', port),
  );
  problems.push(...checkScrapeAnnotations(where, orchestrator, port));

  const spread = podSpec(orchestrator)?.topologySpreadConstraints ?? [];
  if (spread.length === 0) problems.push(`${where}: no topologySpreadConstraints`);
  const keys = spread.map((c) => c.topologyKey);
  if (new Set(keys).size !== keys.length)
    problems.push(`${where}: topologySpreadConstraints repeat a topologyKey: ${keys.join(', ')}`);
  for (const constraint of spread) {
    if (!matches(constraint.labelSelector?.matchLabels, podLabels(orchestrator))) {
      problems.push(
        `${where}: topology spread on ${constraint.topologyKey} does not select the orchestrator pods`,
      );
    }
  }

  const fronting = services(build).filter((s) => matches(s.spec?.selector, podLabels(orchestrator)));
  if (fronting.length === 0) problems.push(`${where}: no Service selects the orchestrator pods`);
  for (const service of fronting) {
    for (const servicePort of service.spec?.ports ?? []) {
      const target = portNumber(container, servicePort.targetPort ?? servicePort.port);
      if (target !== port)
        problems.push(`Service ${nameOf(service)}: port ${servicePort.port} targets ${target}, not ${port}`);
    }
  }

  const autoscalers = hpasTargeting(build, nameOf(orchestrator));
  if (autoscalers.length !== 1) {
    problems.push(`${where}: expected one HorizontalPodAutoscaler targeting it, found ${autoscalers.length}`);
  }
  let minReplicas = replicas;
  for (const hpa of autoscalers) {
    const spec = hpa.spec;
    minReplicas = spec?.minReplicas ?? 1;
    const cpu = spec?.metrics?.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
    if (!cpu) problems.push(`HorizontalPodAutoscaler ${nameOf(hpa)}: no cpu Resource metric`);
    if (minReplicas < 2)
      problems.push(`HorizontalPodAutoscaler ${nameOf(hpa)}: minReplicas ${minReplicas} < 2`);
    if (spec && spec.maxReplicas < minReplicas)
      problems.push(`HorizontalPodAutoscaler ${nameOf(hpa)}: maxReplicas < minReplicas`);
    if (spec && (replicas < minReplicas || replicas > spec.maxReplicas)) {
      problems.push(
        `${where}: replicas ${replicas} outside the HPA range ${minReplicas}..${spec.maxReplicas}`,
      );
    }
  }

  const pdb = pdbFor(build, orchestrator);
  if (!pdb) problems.push(`${where}: no PodDisruptionBudget selects its pods`);
  const minAvailable = pdb?.spec?.minAvailable;
  if (typeof minAvailable === 'number' && minAvailable >= minReplicas) {
    problems.push(
      `PodDisruptionBudget ${nameOf(pdb ?? {})}: minAvailable ${minAvailable} >= minReplicas ${minReplicas} blocks every drain`,
    );
  }
  return problems;
}

// ---- tool workers -------------------------------------------------------------------------------

export interface WorkerGroup {
  deployment: IDeployment;
  servers: string[];
}

export function workerGroups(build: Build, context: AppContext, options: BuildOptions): WorkerGroup[] {
  return workers(build).map((deployment) => {
    const container = appContainer(deployment);
    const env = container ? resolveEnv(build, container, options) : undefined;
    const list = env?.values
      .get('WORKER_SERVERS')
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return { deployment, servers: list && list.length > 0 ? list : Object.keys(context.config.servers) };
  });
}

export function checkWorkers(build: Build, context: AppContext, options: BuildOptions): string[] {
  const problems: string[] = [];
  const groups = workerGroups(build, context, options);
  if (groups.length < 2) problems.push(`expected at least two tool-worker groups, found ${groups.length}`);

  for (const server of Object.keys(context.config.servers)) {
    const serving = groups.filter((g) => g.servers.includes(server)).map((g) => nameOf(g.deployment));
    if (serving.length !== 1) {
      problems.push(
        `server ${server} is served by ${serving.length} worker Deployments (${serving.join(', ')}); expected exactly one`,
      );
    }
  }

  for (const { deployment, servers } of groups) {
    const where = `Deployment ${nameOf(deployment)}`;
    const container = appContainer(deployment);
    if (!container) {
      problems.push(`${where}: no container`);
      continue;
    }
    const env = resolveEnv(build, container, options);
    const unknown = servers.filter((s) => !context.config.servers[s]);
    if (unknown.length > 0)
      problems.push(`${where}: WORKER_SERVERS names unconfigured servers: ${unknown.join(', ')}`);
    const port = Number(env.values.get('WORKER_HTTP_PORT') ?? DEFAULT_WORKER_HTTP_PORT);
    problems.push(
      ...checkProbe(where, container, container.readinessProbe, 'readinessProbe', '/health/ready', port),
    );
    problems.push(
      ...checkProbe(where, container, container.livenessProbe, 'livenessProbe', '/health/live', port),
    );
    problems.push(...checkScrapeAnnotations(where, deployment, port));

    const longest = Math.max(0, ...servers.map((s) => hardTimeoutMs(context.config, s)));
    const needed = longest + context.config.worker.shutdownGraceMs;
    const grace = (podSpec(deployment)?.terminationGracePeriodSeconds ?? 30) * 1000;
    if (grace <= needed) {
      problems.push(
        `${where}: terminationGracePeriodSeconds ${grace / 1000} is not longer than the longest tool call ` +
          `(${longest} ms) + worker.shutdownGraceMs (${context.config.worker.shutdownGraceMs} ms)`,
      );
    }

    const pdb = pdbFor(build, deployment);
    if (!pdb) problems.push(`${where}: no PodDisruptionBudget selects its pods`);
    else if (pdb.spec?.minAvailable !== undefined && pdb.spec.minAvailable !== 0) {
      problems.push(
        `PodDisruptionBudget ${nameOf(pdb)}: use maxUnavailable; minAvailable blocks drains when KEDA runs 1 replica`,
      );
    }
    const autoscalers = hpasTargeting(build, nameOf(deployment));
    if (autoscalers.length > 0) problems.push(`${where}: targeted by an HPA; KEDA owns its replica count`);

    const scaled = scaledObjects(build).filter(
      (s) =>
        s.spec.scaleTargetRef.name === nameOf(deployment) &&
        (s.spec.scaleTargetRef.kind ?? 'Deployment') === 'Deployment',
    );
    if (options.workerScaling === 'fixed') {
      if (scaled.length > 0)
        problems.push(`${where}: fixed replicas expected, but a ScaledObject targets it`);
      if ((deployment.spec?.replicas ?? 1) < 1) problems.push(`${where}: replicas below 1`);
      continue;
    }
    if (scaled.length !== 1) {
      problems.push(`${where}: expected one ScaledObject targeting it, found ${scaled.length}`);
      continue;
    }
    let backend: BackendChoice['backend'];
    try {
      backend = backendOf(env, context.config).backend;
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
      continue;
    }
    problems.push(...checkScaledObject(build, scaled[0] as IScaledObject, servers, context, env, backend));
  }
  return problems;
}

function alternatives(query: string, label: string): string[] | undefined {
  const match = new RegExp(`${label}\\s*=~\\s*"([^"]*)"`).exec(query);
  return match?.[1]?.split('|').filter(Boolean);
}

function checkScaledObject(
  build: Build,
  scaled: IScaledObject,
  servers: string[],
  context: AppContext,
  env: ResolvedEnv,
  backend: BackendChoice['backend'],
): string[] {
  const where = `ScaledObject ${nameOf(scaled)}`;
  const problems: string[] = [];
  const spec = scaled.spec;
  if (spec.minReplicaCount !== 1)
    problems.push(`${where}: minReplicaCount is ${spec.minReplicaCount}, expected 1`);
  const max = spec.maxReplicaCount;
  const concurrency = servers.map((s) => context.config.servers[s]?.concurrency ?? 1);
  const total = concurrency.reduce((a, b) => a + b, 0);
  if (max === undefined) problems.push(`${where}: no maxReplicaCount`);
  else if (concurrency.every((c) => c === 1) && max > SERIALIZED_MAX_REPLICAS) {
    problems.push(
      `${where}: maxReplicaCount ${max} for serialized servers (concurrency 1); more than ${SERIALIZED_MAX_REPLICAS} adds nothing`,
    );
  } else if (max > Math.max(SERIALIZED_MAX_REPLICAS, total)) {
    problems.push(`${where}: maxReplicaCount ${max} exceeds the servers' total concurrency ${total}`);
  }
  if (spec.pollingInterval === undefined) problems.push(`${where}: no pollingInterval`);
  if (spec.cooldownPeriod === undefined) problems.push(`${where}: no cooldownPeriod`);

  for (const [index, trigger] of spec.triggers.entries()) {
    const known = KNOWN_TRIGGER_METADATA[trigger.type];
    if (!known) {
      problems.push(`${where}: trigger ${index} has unexpected type ${trigger.type}`);
      continue;
    }
    for (const key of Object.keys(trigger.metadata)) {
      if (!known.includes(key))
        problems.push(`${where}: ${trigger.type} trigger ${index}: unknown metadata key ${key}`);
    }
  }

  const ofType = (type: string) => spec.triggers.filter((t) => t.type === type);
  const prometheus = ofType('prometheus');
  if (backend === 'redis') {
    for (const trigger of ofType('postgresql')) {
      problems.push(
        `${where}: postgresql trigger ${trigger.name ?? ''} on a Redis deployment (there is no job table to count)`,
      );
    }
    problems.push(...checkRedisTriggers(build, where, ofType('redis'), servers, context, env));
    if (prometheus.length !== 1)
      problems.push(`${where}: ${prometheus.length} prometheus triggers; expected 1`);
  } else {
    for (const trigger of ofType('redis')) {
      problems.push(
        `${where}: redis trigger on ${trigger.metadata.listName} on a PostgreSQL deployment (no Redis holds its queues)`,
      );
    }
    problems.push(...checkPostgresqlTriggers(build, where, ofType('postgresql'), servers, context, env));
    // The Prometheus trigger is optional on PostgreSQL: the postgresql triggers need no scraper.
    if (prometheus.length > 1)
      problems.push(`${where}: ${prometheus.length} prometheus triggers; expected at most 1`);
  }
  problems.push(...checkPrometheusTriggers(where, prometheus, servers));
  return problems;
}

type Trigger = IScaledObject['spec']['triggers'][number];

function checkRedisTriggers(
  build: Build,
  where: string,
  redis: Trigger[],
  servers: string[],
  context: AppContext,
  env: ResolvedEnv,
): string[] {
  const problems: string[] = [];
  const expected = new Map(servers.map((s) => [`${context.prefix}:${toolQueueName(s)}:wait`, s]));
  for (const [list, server] of expected) {
    const count = redis.filter((t) => t.metadata.listName === list).length;
    if (count !== 1)
      problems.push(`${where}: ${count} redis triggers on ${list} (server ${server}); expected 1`);
  }
  for (const trigger of redis) {
    const list = trigger.metadata.listName ?? '';
    if (!expected.has(list))
      problems.push(`${where}: redis trigger on ${list}, which is not the wait list of a served server`);
    if (!/^[1-9]\d*$/.test(trigger.metadata.listLength ?? '')) {
      problems.push(
        `${where}: redis trigger on ${list}: listLength ${trigger.metadata.listLength} is not a positive integer`,
      );
    }
    problems.push(...checkRedisAddress(build, where, trigger, env));
    const redisUrl = env.values.get('REDIS_URL');
    if (redisUrl) {
      const database = /^\/(\d+)/.exec(new URL(redisUrl).pathname)?.[1] ?? '0';
      if ((trigger.metadata.databaseIndex ?? '0') !== database) {
        problems.push(
          `${where}: redis trigger on ${list} reads database ${trigger.metadata.databaseIndex ?? '0'}, REDIS_URL uses ${database}`,
        );
      }
    }
  }

  return problems;
}

/**
 * One postgresql trigger per served server, counting that server's backlog in the queue schema's `job`
 * table, as a role that is not the apps' own (KEDA gets read access to the queue table, nothing more).
 */
function checkPostgresqlTriggers(
  build: Build,
  where: string,
  triggers: Trigger[],
  servers: string[],
  context: AppContext,
  env: ResolvedEnv,
): string[] {
  const problems: string[] = [];
  const schema = queueSchemaName(context.prefix);
  const queues = new Map(servers.map((s) => [toolQueueName(s), s]));
  const counted = new Map<string, number>();
  const databaseUrl = env.values.get('DATABASE_URL');
  const database = databaseUrl ? new URL(databaseUrl) : undefined;
  for (const trigger of triggers) {
    const metadata = trigger.metadata;
    const label = `postgresql trigger ${trigger.name ?? metadata.query}`;
    const query = parseBacklogQuery(metadata.query ?? '');
    if (!query) {
      problems.push(
        `${where}: ${label}: query is not SELECT count(*) FROM <schema>.job WHERE queue = '<queue>' AND state IN (…): ${metadata.query}`,
      );
      continue;
    }
    if (query.schema !== schema) {
      problems.push(
        `${where}: ${label} reads schema ${query.schema}; SWITCHYARD_PREFIX ${context.prefix} keeps its queues in ${schema}`,
      );
    }
    if (queues.has(query.queue)) counted.set(query.queue, (counted.get(query.queue) ?? 0) + 1);
    else problems.push(`${where}: ${label} counts ${query.queue}, which is not the queue of a served server`);
    const missing = JOB_STATES_FOR_BACKLOG.filter((s) => !query.states.includes(s));
    if (missing.length > 0) problems.push(`${where}: ${label} misses states ${missing.join(', ')}`);
    const unknown = query.states.filter((s) => !(JOB_STATES as readonly string[]).includes(s));
    if (unknown.length > 0)
      problems.push(
        `${where}: ${label}: ${unknown.join(', ')} is not a job_state (PostgreSQL refuses the query)`,
      );
    if (query.states.includes('active')) problems.push(`${where}: ${label} counts active jobs as backlog`);
    if (!/^\d+(\.\d+)?$/.test(metadata.targetQueryValue ?? '') || Number(metadata.targetQueryValue) <= 0) {
      problems.push(
        `${where}: ${label}: targetQueryValue ${metadata.targetQueryValue} is not a positive number`,
      );
    }
    problems.push(...checkPostgresqlConnection(build, where, label, trigger, env));
    if (database && metadata.dbName !== undefined) {
      if (metadata.dbName !== database.pathname.slice(1))
        problems.push(
          `${where}: ${label} reads database ${metadata.dbName}, DATABASE_URL uses ${database.pathname.slice(1)}`,
        );
      if (metadata.userName === decodeURIComponent(database.username))
        problems.push(
          `${where}: ${label} logs in as the apps' role ${metadata.userName}; give KEDA a read-only role`,
        );
    }
  }
  for (const [queue, server] of queues) {
    const count = counted.get(queue) ?? 0;
    if (count !== 1)
      problems.push(`${where}: ${count} postgresql triggers on ${queue} (server ${server}); expected 1`);
  }
  return problems;
}

interface BacklogQuery {
  schema: string;
  queue: string;
  states: string[];
}

/** The queue-depth query of a postgresql trigger, taken apart; undefined when it has another shape. */
function parseBacklogQuery(query: string): BacklogQuery | undefined {
  const match =
    /^\s*SELECT\s+count\(\*\)\s+FROM\s+([a-z_][a-z0-9_]*)\.job\s+WHERE\s+queue\s*=\s*'([^']+)'\s+AND\s+state\s+IN\s*\(([^)]*)\)\s*;?\s*$/i.exec(
      query,
    );
  if (!match) return undefined;
  const [, schema = '', queue = '', list = ''] = match;
  const states = list.split(',').map((item) => item.trim().replace(/^'(.*)'$/, '$1'));
  return { schema, queue, states };
}

/** The trigger's connection and password come from metadata, the worker's env or a TriggerAuthentication. */
function checkPostgresqlConnection(
  build: Build,
  where: string,
  label: string,
  trigger: Trigger,
  env: ResolvedEnv,
): string[] {
  const metadata = trigger.metadata;
  const fromEnv = (key: 'connectionFromEnv' | 'passwordFromEnv') => {
    const variable = metadata[key];
    if (variable === undefined) return undefined;
    return env.values.has(variable) || env.unknown.has(variable)
      ? []
      : [`${where}: ${label}: ${key} ${variable}, which the worker container does not set`];
  };
  const connection = fromEnv('connectionFromEnv');
  if (connection) return connection;
  const ref = trigger.authenticationRef;
  const auth = ref && triggerAuthentications(build).find((a) => nameOf(a) === ref.name);
  const parameters = (auth?.spec.secretTargetRef ?? []).map((r) => r.parameter);
  if (parameters.includes('connection')) return [];
  const problems: string[] = [];
  for (const key of ['host', 'userName', 'dbName'] as const) {
    if (!metadata[key] && !parameters.includes(key))
      problems.push(`${where}: ${label} has no ${key} (metadata or TriggerAuthentication)`);
  }
  const password = fromEnv('passwordFromEnv');
  if (password) problems.push(...password);
  else if (!parameters.includes('password')) {
    problems.push(
      `${where}: ${label} has no password (passwordFromEnv or a TriggerAuthentication parameter)`,
    );
  }
  return problems;
}

function checkPrometheusTriggers(where: string, prometheus: Trigger[], servers: string[]): string[] {
  const problems: string[] = [];
  for (const trigger of prometheus) {
    const query = trigger.metadata.query ?? '';
    if (!query.includes('switchyard_queue_jobs'))
      problems.push(`${where}: prometheus query does not read switchyard_queue_jobs`);
    const queried = alternatives(query, 'server') ?? [];
    if ([...queried].sort().join(',') !== [...servers].sort().join(',')) {
      problems.push(
        `${where}: prometheus query covers servers [${queried.join(', ')}], the Deployment serves [${servers.join(', ')}]`,
      );
    }
    const states = alternatives(query, 'state') ?? [];
    const missing = QUEUE_STATES_FOR_BACKLOG.filter((s) => !states.includes(s));
    if (missing.length > 0) problems.push(`${where}: prometheus query misses states ${missing.join(', ')}`);
    if (states.includes('active')) problems.push(`${where}: prometheus query counts active jobs as backlog`);
    // Every orchestrator replica exports the same gauge: a plain sum would multiply by the replica count.
    if (!/\bmax\s+by\s*\(/.test(query)) {
      problems.push(
        `${where}: prometheus query must de-duplicate replicas (max by (server, state)) before summing`,
      );
    }
    if (!/^\d+(\.\d+)?$/.test(trigger.metadata.threshold ?? '') || Number(trigger.metadata.threshold) <= 0) {
      problems.push(`${where}: prometheus threshold ${trigger.metadata.threshold} is not a positive number`);
    }
    if (!/^https?:\/\/[^/]+/.test(trigger.metadata.serverAddress ?? '')) {
      problems.push(
        `${where}: prometheus serverAddress ${trigger.metadata.serverAddress} is not an http(s) URL`,
      );
    }
  }
  return problems;
}

function checkRedisAddress(build: Build, where: string, trigger: Trigger, env: ResolvedEnv): string[] {
  const metadata = trigger.metadata;
  if (metadata.address || metadata.host) return [];
  for (const key of ['addressFromEnv', 'hostFromEnv'] as const) {
    const variable = metadata[key];
    if (variable === undefined) continue;
    return env.values.has(variable) || env.unknown.has(variable)
      ? []
      : [`${where}: redis trigger ${key} ${variable}, which the worker container does not set`];
  }
  const ref = trigger.authenticationRef;
  const auth = ref && triggerAuthentications(build).find((a) => nameOf(a) === ref.name);
  const parameters = (auth?.spec.secretTargetRef ?? []).map((r) => r.parameter);
  if (parameters.includes('address') || parameters.includes('host')) return [];
  return [
    `${where}: redis trigger on ${metadata.listName} has no address (metadata, *FromEnv or TriggerAuthentication)`,
  ];
}

// ---- endpoints inside the cluster ---------------------------------------------------------------

/**
 * Hosts of REDIS_URL, REDIS_ADDRESS, DATABASE_URL, OTEL_EXPORTER_OTLP_ENDPOINT, KEDA's Prometheus and
 * KEDA's PostgreSQL that name a Service of this namespace (a bare name, or `<name>.<namespace>.svc…`)
 * must exist with that port. Remote hosts (other namespaces, other domains) are the operator's to provide.
 */
export function checkInClusterEndpoints(build: Build, options: BuildOptions): string[] {
  const problems: string[] = [];
  const namespace = build.objects.find((o) => o.metadata.namespace)?.metadata.namespace;
  const endpoints: { where: string; value: string }[] = [];
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const container = appContainer(app);
    if (!container) continue;
    const env = resolveEnv(build, container, options);
    for (const name of ['REDIS_URL', 'DATABASE_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
      const value = env.values.get(name);
      if (value) endpoints.push({ where: `Deployment ${nameOf(app)} ${name}`, value });
    }
  }
  for (const secret of secrets(build)) {
    const address = decode(secret).REDIS_ADDRESS;
    if (address)
      endpoints.push({ where: `Secret ${nameOf(secret)} REDIS_ADDRESS`, value: `redis://${address}` });
  }
  for (const scaled of scaledObjects(build)) {
    for (const trigger of scaled.spec.triggers) {
      if (trigger.metadata.serverAddress) {
        endpoints.push({
          where: `ScaledObject ${nameOf(scaled)} serverAddress`,
          value: trigger.metadata.serverAddress,
        });
      }
      if (trigger.type === 'postgresql' && trigger.metadata.host) {
        const port = trigger.metadata.port ? `:${trigger.metadata.port}` : '';
        endpoints.push({
          where: `ScaledObject ${nameOf(scaled)} postgresql host`,
          value: `postgres://${trigger.metadata.host}${port}`,
        });
      }
    }
  }
  const defaults: Record<string, number> = {
    'redis:': 6379,
    'rediss:': 6379,
    'postgres:': 5432,
    'postgresql:': 5432,
    'http:': 80,
    'https:': 443,
  };
  for (const { where, value } of endpoints) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push(`${where}: ${value} is not a URL`);
      continue;
    }
    const labels = url.hostname.split('.');
    const local =
      labels.length === 1 || (namespace !== undefined && labels[1] === namespace && labels[2] === 'svc');
    if (!local) continue;
    const port = url.port === '' ? defaults[url.protocol] : Number(url.port);
    const service = services(build).find((s) => nameOf(s) === labels[0]);
    if (!service) problems.push(`${where}: host ${url.hostname} is not a Service of this build`);
    else if (!service.spec?.ports?.some((p) => p.port === port)) {
      problems.push(`${where}: Service ${labels[0]} has no port ${port}`);
    }
  }
  return problems;
}

// ---- overlay-specific ---------------------------------------------------------------------------

function statefulSet(build: Build, name: string): IStatefulSet | undefined {
  return statefulSets(build).find((s) => nameOf(s) === name);
}

/** PostgreSQL on a PVC, with the credentials the apps' DATABASE_URL uses. */
function checkPostgresStatefulSet(build: Build, options: BuildOptions): string[] {
  const problems: string[] = [];
  const postgres = statefulSet(build, 'postgres');
  if (!postgres) problems.push('no postgres StatefulSet');
  else {
    const container = podSpec(postgres)?.containers.find((c) => c.name === 'postgres');
    const claims = (postgres.spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name);
    const mount = container?.volumeMounts?.find((m) => m.mountPath === '/var/lib/postgresql/data');
    if (!mount || !claims.includes(mount.name))
      problems.push('postgres data is not on a PersistentVolumeClaim');
    if (container) {
      const env = resolveEnv(build, container, options);
      const orchestrator = orchestrators(build)[0];
      const app = orchestrator && appContainer(orchestrator);
      const databaseUrl = app ? resolveEnv(build, app, options).values.get('DATABASE_URL') : undefined;
      if (databaseUrl) {
        const url = new URL(databaseUrl);
        const expected = {
          user: env.values.get('POSTGRES_USER') ?? 'postgres',
          password: env.values.get('POSTGRES_PASSWORD'),
          database: env.values.get('POSTGRES_DB') ?? env.values.get('POSTGRES_USER') ?? 'postgres',
        };
        const actual = {
          user: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
          database: url.pathname.slice(1),
        };
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          problems.push(
            `DATABASE_URL credentials ${JSON.stringify({ ...actual, password: '…' })} do not match the postgres StatefulSet's`,
          );
        }
      }
    }
  }
  return problems;
}

/** Redis with AOF on a PVC, PostgreSQL on a PVC, Jaeger receiving OTLP; credentials agree. */
export function checkSelfContained(build: Build, options: BuildOptions): string[] {
  const problems: string[] = [];
  const redis = statefulSet(build, 'redis');
  if (!redis) problems.push('no redis StatefulSet');
  else {
    const container = podSpec(redis)?.containers.find((c) => c.name === 'redis');
    const args = [...(container?.command ?? []), ...(container?.args ?? [])].join(' ');
    if (!/--appendonly\s+yes/.test(args)) problems.push('redis does not run with --appendonly yes');
    const claims = (redis.spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name);
    const dataDir = /--dir\s+(\S+)/.exec(args)?.[1] ?? '/data';
    const mount = container?.volumeMounts?.find((m) => m.mountPath === dataDir);
    if (!mount || !claims.includes(mount.name))
      problems.push(`redis ${dataDir} is not on a PersistentVolumeClaim`);
  }
  problems.push(...checkPostgresStatefulSet(build, options));
  const jaeger = deployments(build).find((d) => nameOf(d) === 'jaeger');
  const otlp =
    jaeger && podSpec(jaeger)?.containers[0]?.env?.find((e) => e.name === 'COLLECTOR_OTLP_ENABLED');
  if (otlp?.value !== 'true') problems.push('no jaeger Deployment with COLLECTOR_OTLP_ENABLED=true');
  for (const name of ['redis', 'postgres', 'jaeger']) {
    if (!services(build).some((s) => nameOf(s) === name)) problems.push(`no ${name} Service`);
  }
  return problems;
}

/**
 * PostgreSQL alone: no Redis object, variable, Secret key or KEDA credential is left; every app runs on
 * postgres because SWITCHYARD_BACKEND says so (not by the automatic rule, which a stray REDIS_URL would
 * flip); PostgreSQL on a PVC; and the Job that makes KEDA's read-only role grants the role the triggers
 * log in as, on the queue schema of the apps' prefix, with the password KEDA is given.
 */
export function checkPostgresOnly(build: Build, context: AppContext, options: BuildOptions): string[] {
  const problems: string[] = [];
  const redisish = (text: string | undefined) => /redis/i.test(text ?? '');
  for (const object of build.objects) {
    if (redisish(object.metadata.name))
      problems.push(`${object.kind} ${object.metadata.name} is a Redis object`);
  }
  for (const workload of [...deployments(build), ...statefulSets(build), ...jobs(build)]) {
    for (const container of allContainers(workload)) {
      if (redisish(container.image?.split('/').pop()))
        problems.push(`${workload.kind} ${nameOf(workload)} runs image ${container.image}`);
      const env = resolveEnv(build, container, options);
      for (const name of REDIS_VARIABLES) {
        if (env.values.has(name) || env.unknown.has(name))
          problems.push(`${workload.kind} ${nameOf(workload)}: container ${container.name} sets ${name}`);
      }
    }
  }
  for (const holder of [...secrets(build), ...configMaps(build)]) {
    const keys =
      holder.kind === 'Secret' ? Object.keys(decode(holder as ISecret)) : Object.keys(holder.data ?? {});
    for (const key of keys.filter((k) => k.startsWith('REDIS_')))
      problems.push(`${holder.kind} ${nameOf(holder)} holds ${key}`);
  }
  for (const scaled of scaledObjects(build)) {
    for (const trigger of scaled.spec.triggers) {
      if (trigger.type === 'redis' || redisish(trigger.authenticationRef?.name))
        problems.push(`ScaledObject ${nameOf(scaled)}: trigger ${trigger.name ?? trigger.type} reads Redis`);
    }
  }
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const container = appContainer(app);
    if (!container) continue;
    const env = resolveEnv(build, container, options);
    if (env.values.get('SWITCHYARD_BACKEND') !== 'postgres')
      problems.push(`Deployment ${nameOf(app)}: SWITCHYARD_BACKEND is not postgres`);
  }
  problems.push(...checkPostgresStatefulSet(build, options));
  problems.push(...checkKedaRole(build, context, options));
  return problems;
}

/** The Job that creates KEDA's role agrees with the triggers and their TriggerAuthentication. */
export function checkKedaRole(build: Build, context: AppContext, options: BuildOptions): string[] {
  const triggers = scaledObjects(build).flatMap((s) =>
    s.spec.triggers.filter((t) => t.type === 'postgresql'),
  );
  const job = jobs(build).find((j) => podLabels(j)[COMPONENT] === 'keda-role');
  const container = job && podSpec(job)?.containers[0];
  if (!job || !container) return ['no Job labelled keda-role to create the read-only role KEDA logs in as'];
  const where = `Job ${nameOf(job)}`;
  const problems: string[] = [];
  const env = resolveEnv(build, container, options);
  problems.push(...env.problems.map((p) => `${where}: ${p}`));
  const schema = queueSchemaName(context.prefix);
  if (env.values.get('QUEUE_SCHEMA') !== schema)
    problems.push(
      `${where}: QUEUE_SCHEMA is ${env.values.get('QUEUE_SCHEMA')}, the apps' queue schema is ${schema}`,
    );
  const role = env.values.get('KEDA_POSTGRES_USER');
  for (const trigger of triggers) {
    if (trigger.metadata.userName !== role)
      problems.push(
        `${where}: makes role ${role}, trigger ${trigger.name} logs in as ${trigger.metadata.userName}`,
      );
    const auth = triggerAuthentications(build).find((a) => nameOf(a) === trigger.authenticationRef?.name);
    const password = auth?.spec.secretTargetRef?.find((r) => r.parameter === 'password');
    const given = container.env?.find((e) => e.name === 'KEDA_POSTGRES_PASSWORD')?.valueFrom?.secretKeyRef;
    if (password && (given?.name !== password.name || given.key !== password.key)) {
      problems.push(
        `${where}: sets the password from ${given?.name}/${given?.key}, KEDA reads ${password.name}/${password.key}`,
      );
    }
  }
  const script = [...(container.command ?? []), ...(container.args ?? [])].join('\n');
  for (const grant of [
    /GRANT USAGE ON SCHEMA :"schema" TO :"role"/,
    /GRANT SELECT ON :"schema"\.job TO :"role"/,
  ]) {
    if (!grant.test(script)) problems.push(`${where}: its script does not run ${grant.source}`);
  }
  if (/GRANT\s+(ALL|INSERT|UPDATE|DELETE)|ON ALL TABLES|pg_read_all_data/i.test(script))
    problems.push(`${where}: grants KEDA more than SELECT on the job table`);
  return problems;
}

/** Images come from a registry with a real tag, no placeholder Secret is rendered, more orchestrators. */
export function checkProduction(build: Build, base: Build): string[] {
  const problems: string[] = [];
  for (const workload of [...orchestrators(build), ...workers(build)]) {
    for (const container of allContainers(workload)) {
      const image = container.image ?? '';
      if (!/^[a-z0-9.-]+\.[a-z]{2,}(:\d+)?\//.test(image))
        problems.push(`${nameOf(workload)}: image ${image} is not from a registry host`);
      if (/:(dev|latest)$/.test(image))
        problems.push(`${nameOf(workload)}: image ${image} has a development tag`);
    }
  }
  if (secrets(build).length > 0) {
    problems.push(
      `renders Secrets (${secrets(build).map(nameOf).join(', ')}); production Secrets are managed outside git`,
    );
  }
  const replicas = (b: Build) => orchestrators(b)[0]?.spec?.replicas ?? 0;
  if (replicas(build) <= replicas(base))
    problems.push(`orchestrator replicas ${replicas(build)} not above the base's ${replicas(base)}`);
  return problems;
}
