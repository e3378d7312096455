/**
 * The ServiceAccount, NetworkPolicy and Ingress checks (support/exposure.ts) reject deliberately broken
 * copies of the production overlay, which has all three.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { checkIngresses, checkNetworkPolicies, checkServiceAccounts } from './support/exposure.ts';
import { kustomizations, render } from './support/kustomize.ts';
import type { Build, BuildOptions } from './support/manifests.ts';

const OPTIONS: BuildOptions = {
  externalSecrets: ['switchyard-secrets', 'switchyard-model-keys', 'switchyard-redis', 'switchyard-database'],
};

function production(): Build {
  const found = kustomizations().find((k) => k.name === 'production');
  if (!found) throw new Error('deploy/k8s/overlays/production is missing');
  return { name: 'production', objects: structuredClone(render(found.dir)) };
}

function find<T>(b: Build, kind: string, name: string): T {
  const found = b.objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} not in ${b.name}`);
  return found as unknown as T;
}

describe('the exposure checks pass the production overlay', () => {
  it('as it is', () => {
    const b = production();
    expect([...checkServiceAccounts(b), ...checkNetworkPolicies(b, OPTIONS), ...checkIngresses(b)]).toEqual(
      [],
    );
  });
});

describe('the exposure checks reject', () => {
  it('a worker on the orchestrator’s ServiceAccount, a pod mounting a token, an account that mounts one', () => {
    const b = production();
    const worker = find<IDeployment>(b, 'Deployment', 'tool-worker-search');
    const pod = worker.spec?.template.spec;
    if (!pod) throw new Error('no pod spec');
    pod.serviceAccountName = 'switchyard-orchestrator';
    pod.automountServiceAccountToken = true;
    find<IServiceAccount>(b, 'ServiceAccount', 'switchyard-orchestrator').automountServiceAccountToken = true;
    const problems = checkServiceAccounts(b).join('\n');
    expect(problems).toMatch(
      /ServiceAccount switchyard-orchestrator is shared by the orchestrator and the workers/,
    );
    expect(problems).toMatch(/Deployment tool-worker-search: automountServiceAccountToken is not false/);
    expect(problems).toMatch(
      /ServiceAccount switchyard-orchestrator: automountServiceAccountToken is not false/,
    );
  });

  it('a worker ingress open on every port from everywhere, no DNS, no Redis port', () => {
    const b = production();
    const spec = find<INetworkPolicy>(b, 'NetworkPolicy', 'tool-worker').spec;
    if (!spec) throw new Error('no spec');
    spec.ingress = [{}];
    spec.egress = (spec.egress ?? []).filter(
      (rule) => !rule.ports?.some((p) => p.port === 53 || p.port === 6379),
    );
    const problems = checkNetworkPolicies(b, OPTIONS).join('\n');
    expect(problems).toMatch(/NetworkPolicy tool-worker: an ingress rule allows every source/);
    expect(problems).toMatch(/NetworkPolicy tool-worker: ingress on every port, expected only http\/TCP/);
    expect(problems).toMatch(/NetworkPolicy tool-worker: no DNS egress/);
    expect(problems).toMatch(/tool-worker-search reads REDIS_URL but may not reach port 6379/);
  });

  it('an app no NetworkPolicy selects', () => {
    const b = production();
    const policy = find<INetworkPolicy>(b, 'NetworkPolicy', 'orchestrator');
    if (!policy.spec) throw new Error('no spec');
    policy.spec.podSelector = { matchLabels: { 'app.kubernetes.io/component': 'orchestrater' } };
    expect(checkNetworkPolicies(b, OPTIONS).join('\n')).toMatch(
      /Deployment orchestrator: selected by 0 NetworkPolicies, expected 1/,
    );
  });

  it('an Ingress to a Service that is not there, or to a port the Service lacks', () => {
    const b = production();
    const ingress = find<IIngress>(b, 'Ingress', 'switchyard');
    const path = ingress.spec?.rules?.[0]?.http?.paths[0];
    if (!path?.backend.service) throw new Error('no backend');
    path.backend.service.port = { name: 'https' };
    expect(checkIngresses(b).join('\n')).toMatch(/Service orchestrator has no port https/);
    path.backend.service.name = 'orchestrater';
    expect(checkIngresses(b).join('\n')).toMatch(/Service orchestrater is not in the build/);
  });
});
