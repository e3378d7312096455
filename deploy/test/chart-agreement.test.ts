/**
 * The chart and the kustomize tree deploy the same thing: rendered with the values that mirror an
 * overlay, the chart's objects equal the overlay's in everything but the labels Helm adds, the config
 * checksum annotations and imagePullPolicy. So a change to one path that the other lacks fails here.
 */
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { renderChart } from './support/chart.ts';
import { kustomizations, render } from './support/kustomize.ts';
import type { KubeObject } from './support/models.ts';

function overlay(name: string): KubeObject[] {
  const found = kustomizations().find((k) => k.name === name);
  if (!found) throw new Error(`deploy/k8s: no kustomization ${name}`);
  return render(found.dir);
}

function pick<T>(objects: KubeObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} is not rendered`);
  return found as unknown as T;
}

const names = (objects: KubeObject[], kind: string) =>
  objects
    .filter((o) => o.kind === kind)
    .map((o) => o.metadata.name)
    .sort();

/** A Deployment's spec without what legitimately differs between the two paths. */
function essentials(deployment: IDeployment) {
  const spec = structuredClone(deployment.spec);
  if (!spec) throw new Error(`Deployment ${deployment.metadata?.name} has no spec`);
  const strip = (c: IContainer) => {
    delete c.imagePullPolicy;
    return c;
  };
  const pod = spec.template.spec;
  if (pod) {
    pod.containers = pod.containers.map(strip);
    if (pod.initContainers) pod.initContainers = pod.initContainers.map(strip);
  }
  const annotations = Object.fromEntries(
    Object.entries(spec.template.metadata?.annotations ?? {}).filter(([key]) => !key.startsWith('checksum/')),
  );
  // kustomize names its generated ConfigMaps with a content hash; the chart rolls pods with checksums.
  const unhashed = JSON.stringify({ ...spec, template: { spec: pod, annotations } }).replace(
    /"(switchyard-(?:config|env))-[a-z0-9]{10}"/g,
    '"$1"',
  );
  return JSON.parse(unhashed) as unknown;
}

const KEDA = ['--set', 'autoscaling.enabled=true'];
/** Kinds whose whole spec must be equal on both paths. */
const SAME_SPEC = [
  'Service',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'ScaledObject',
  'TriggerAuthentication',
];

describe('the chart agrees with deploy/k8s/base (chart values: autoscaling on)', () => {
  const base = () => overlay('base');
  const chart = () => renderChart([], KEDA);

  it('renders the same Deployments, Services, HPAs, PDBs, ScaledObjects, ServiceAccounts', async () => {
    const rendered = await chart();
    for (const kind of ['Deployment', 'ServiceAccount', ...SAME_SPEC]) {
      expect(names(rendered, kind), kind).toEqual(names(base(), kind));
    }
  });

  it('runs the same images, ports, env names, probes, resources, mounts and grace periods', async () => {
    const rendered = await chart();
    for (const name of names(base(), 'Deployment')) {
      expect(essentials(pick(rendered, 'Deployment', name)), name).toEqual(
        essentials(pick(base(), 'Deployment', name)),
      );
    }
  });

  it('has the same Service, HPA, PDB, ScaledObject and TriggerAuthentication specs', async () => {
    const rendered = await chart();
    for (const kind of SAME_SPEC) {
      for (const name of names(base(), kind)) {
        expect(pick<{ spec: unknown }>(rendered, kind, name).spec, `${kind} ${name}`).toEqual(
          pick<{ spec: unknown }>(base(), kind, name).spec,
        );
      }
    }
  });

  it('mounts the same switchyard.yaml and sets the same environment (plus an explicit SWITCHYARD_BACKEND)', async () => {
    const rendered = await chart();
    const config = (objects: KubeObject[]) => {
      const map = objects.find(
        (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('switchyard-config'),
      ) as unknown as IConfigMap | undefined;
      return parseYaml(map?.data?.['switchyard.yaml'] ?? '');
    };
    expect(config(rendered)).toEqual(config(base()));
    const env = (objects: KubeObject[]) =>
      (
        objects.find(
          (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('switchyard-env'),
        ) as unknown as IConfigMap | undefined
      )?.data;
    expect(env(rendered)).toEqual({ ...env(base()), SWITCHYARD_BACKEND: 'redis' });
  });
});

describe('the chart agrees with deploy/k8s/overlays/postgres-only (chart values: backend postgres)', () => {
  it('scales each group on the same postgresql queries and thresholds, and gives the workers DATABASE_URL', async () => {
    const rendered = await renderChart(['postgres.yaml']);
    const kustomized = overlay('postgres-only');
    for (const name of names(kustomized, 'ScaledObject')) {
      const triggers = (objects: KubeObject[]) =>
        pick<IScaledObject>(objects, 'ScaledObject', name).spec.triggers.map((t) => ({
          type: t.type,
          name: t.name,
          query: t.metadata.query,
          targetQueryValue: t.metadata.targetQueryValue,
          userName: t.metadata.userName,
          auth: t.authenticationRef?.name,
        }));
      expect(triggers(rendered), name).toEqual(triggers(kustomized));
    }
    for (const name of names(kustomized, 'Deployment').filter((n) => n.startsWith('tool-worker'))) {
      const envNames = (objects: KubeObject[]) =>
        pick<IDeployment>(objects, 'Deployment', name).spec?.template.spec?.containers[0]?.env?.map(
          (e) => e.name,
        );
      expect(envNames(rendered)?.sort(), name).toEqual(envNames(kustomized)?.sort());
    }
  });
});

describe('the chart agrees with deploy/k8s/overlays/production (components ingress and network-policy)', () => {
  const CHART_EXPOSURE = [
    '--set',
    'networkPolicy.enabled=true,ingress.enabled=true,ingress.className=nginx,ingress.tlsSecretName=switchyard-tls',
    '--set-string',
    'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-buffering=off,ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-read-timeout=3600',
  ];

  it('renders the same NetworkPolicies and Ingress', async () => {
    const rendered = await renderChart([], CHART_EXPOSURE);
    const production = overlay('production');
    expect(names(rendered, 'NetworkPolicy')).toEqual(names(production, 'NetworkPolicy'));
    for (const name of names(production, 'NetworkPolicy')) {
      expect(pick<INetworkPolicy>(rendered, 'NetworkPolicy', name).spec, name).toEqual(
        pick<INetworkPolicy>(production, 'NetworkPolicy', name).spec,
      );
    }
    const ingress = (objects: KubeObject[]) => pick<IIngress>(objects, 'Ingress', 'switchyard');
    expect(ingress(rendered).spec).toEqual(ingress(production).spec);
    expect(ingress(rendered).metadata?.annotations).toEqual(ingress(production).metadata?.annotations);
  });
});
