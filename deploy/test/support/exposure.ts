/**
 * Checks of what a build exposes and with which identity: ServiceAccounts, NetworkPolicies and the
 * Ingress. Shared by the kustomize and the chart tests, so both deploy paths are held to the same rules.
 */

import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import {
  appContainer,
  type Build,
  type BuildOptions,
  COMPONENT,
  orchestrators,
  resolveEnv,
  services,
  workers,
} from './manifests.ts';

const ofKind = <T>(build: Build, kind: string) =>
  build.objects.filter((o) => o.kind === kind) as unknown as T[];
const nameOf = (object: { metadata?: { name?: string } }) => object.metadata?.name ?? '?';
const podLabels = (d: IDeployment) => d.spec?.template.metadata?.labels ?? {};
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);

/**
 * Every app pod runs as its component's own ServiceAccount (orchestrator and workers never share one),
 * and neither the account nor the pod mounts an API token: the apps never call the Kubernetes API.
 */
export function checkServiceAccounts(build: Build): string[] {
  const problems: string[] = [];
  const accounts = ofKind<IServiceAccount>(build, 'ServiceAccount');
  const byComponent = new Map<string, Set<string>>();
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const spec = app.spec?.template.spec;
    const where = `Deployment ${nameOf(app)}`;
    const name = spec?.serviceAccountName;
    if (!name) {
      problems.push(`${where}: no serviceAccountName (runs as the namespace's default account)`);
      continue;
    }
    if (spec?.automountServiceAccountToken !== false)
      problems.push(`${where}: automountServiceAccountToken is not false`);
    const account = accounts.find((a) => nameOf(a) === name);
    if (!account) problems.push(`${where}: ServiceAccount ${name} is not in the build`);
    else if (account.automountServiceAccountToken !== false)
      problems.push(`ServiceAccount ${name}: automountServiceAccountToken is not false`);
    const component = podLabels(app)[COMPONENT] ?? '?';
    byComponent.set(component, (byComponent.get(component) ?? new Set()).add(name));
  }
  const [first, ...rest] = [...byComponent.values()];
  for (const other of rest) {
    for (const name of other) {
      if (first?.has(name))
        problems.push(`ServiceAccount ${name} is shared by the orchestrator and the workers`);
    }
  }
  return problems;
}

type Rule = NonNullable<INetworkPolicy['spec']>['egress'] extends (infer R)[] | undefined ? R : never;

function portsOf(rule: { ports?: { port?: number | string; protocol?: string }[] }): string[] {
  return (rule.ports ?? []).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`);
}

/** The port of a store URL, or its scheme's default. */
function urlPort(url: string | undefined, fallback: number): number {
  if (!url) return fallback;
  try {
    return Number(new URL(url).port || fallback);
  } catch {
    return fallback;
  }
}

/**
 * When a build has NetworkPolicies: each app pod is selected by one that governs both directions; the
 * orchestrator's ingress is its HTTP port only, the workers' ingress is their metrics port only (from
 * the peers allowed to scrape, never from everywhere); both may resolve names and reach their queue
 * store (and the orchestrator its database) on the port the URL names.
 */
export function checkNetworkPolicies(build: Build, options: BuildOptions): string[] {
  const policies = ofKind<INetworkPolicy>(build, 'NetworkPolicy');
  if (policies.length === 0) return [];
  const problems: string[] = [];
  for (const app of [...orchestrators(build), ...workers(build)]) {
    const where = `Deployment ${nameOf(app)}`;
    const mine = policies.filter((p) => selects(p.spec?.podSelector.matchLabels, podLabels(app)));
    if (mine.length !== 1) {
      problems.push(`${where}: selected by ${mine.length} NetworkPolicies, expected 1`);
      continue;
    }
    const [policy] = mine as [INetworkPolicy];
    const spec = policy.spec;
    const types = spec?.policyTypes ?? [];
    if (!types.includes('Ingress') || !types.includes('Egress'))
      problems.push(
        `NetworkPolicy ${nameOf(policy)}: policyTypes ${types.join(',')}, expected Ingress and Egress`,
      );
    for (const rule of spec?.ingress ?? []) {
      if (!rule.from || rule.from.length === 0)
        problems.push(`NetworkPolicy ${nameOf(policy)}: an ingress rule allows every source`);
      const ports = portsOf(rule);
      if (ports.join() !== 'http/TCP')
        problems.push(
          `NetworkPolicy ${nameOf(policy)}: ingress on ${ports.join(', ') || 'every port'}, expected only http/TCP`,
        );
    }
    if ((spec?.ingress ?? []).length === 0)
      problems.push(`NetworkPolicy ${nameOf(policy)}: no ingress rule, so Prometheus cannot scrape ${where}`);
    const container = appContainer(app);
    if (container && !container.ports?.some((p) => p.name === 'http'))
      problems.push(`${where}: no container port named http for its NetworkPolicy`);

    const egress = (spec?.egress ?? []) as Rule[];
    const allows = (port: number, protocol = 'TCP') =>
      egress.some((rule) => rule.ports === undefined || portsOf(rule).includes(`${port}/${protocol}`));
    if (!allows(53, 'UDP')) problems.push(`NetworkPolicy ${nameOf(policy)}: no DNS egress (53/UDP)`);
    const env = container ? resolveEnv(build, container, options) : undefined;
    const redis = env?.values.get('REDIS_URL') ?? (env?.unknown.has('REDIS_URL') ? '' : undefined);
    const database = env?.values.get('DATABASE_URL') ?? (env?.unknown.has('DATABASE_URL') ? '' : undefined);
    if (redis !== undefined && !allows(urlPort(redis, 6379)))
      problems.push(
        `NetworkPolicy ${nameOf(policy)}: ${where} reads REDIS_URL but may not reach port ${urlPort(redis, 6379)}`,
      );
    if (database !== undefined && !allows(urlPort(database, 5432)))
      problems.push(
        `NetworkPolicy ${nameOf(policy)}: ${where} reads DATABASE_URL but may not reach port ${urlPort(database, 5432)}`,
      );
  }
  return problems;
}

/** Every Ingress routes to the orchestrator Service, on a port that Service has. */
export function checkIngresses(build: Build): string[] {
  const problems: string[] = [];
  const orchestratorLabels = orchestrators(build).map(podLabels);
  for (const ingress of ofKind<IIngress>(build, 'Ingress')) {
    for (const rule of ingress.spec?.rules ?? []) {
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend.service;
        const service = services(build).find((s) => nameOf(s) === backend?.name);
        const where = `Ingress ${nameOf(ingress)} ${rule.host ?? '*'}${path.path ?? ''}`;
        if (!service) {
          problems.push(`${where}: Service ${backend?.name} is not in the build`);
          continue;
        }
        if (!orchestratorLabels.some((labels) => selects(service.spec?.selector, labels)))
          problems.push(`${where}: Service ${backend?.name} does not select the orchestrator`);
        const port = backend?.port;
        const found = service.spec?.ports?.some((p) =>
          port?.name ? p.name === port.name : p.port === port?.number,
        );
        if (!found)
          problems.push(`${where}: Service ${backend?.name} has no port ${port?.name ?? port?.number}`);
      }
    }
  }
  return problems;
}
