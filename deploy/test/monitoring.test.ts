/**
 * The monitoring that deploy/ ships: the PrometheusRule and the compose Prometheus's alerts are the same
 * rules, the dashboard ConfigMap carries the dashboard file, the ServiceMonitor and PodMonitor select the
 * orchestrator's Service and the workers' pods on a port they have, and both bundled Prometheus configs
 * scrape the workers too. Schemas: @kubernetes-models/prometheus-operator (the operator's CRDs), in
 * manifests.test.ts with every other object of the `monitored` overlay.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEPLOY_DIR, K8S_DIR, render } from './support/kustomize.ts';
import { type KubeObject, validateObject } from './support/models.ts';

const COMPONENT_DIR = join(K8S_DIR, 'components', 'monitoring');
const DOCKER_DIR = join(DEPLOY_DIR, 'docker');
const monitored = () => render(join(K8S_DIR, 'overlays', 'monitored'));
const readYaml = (path: string): unknown => parseYaml(readFileSync(path, 'utf8'));

interface Selecting extends KubeObject {
  spec: { selector: { matchLabels: Record<string, string> } };
}

const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** What is wrong with the ServiceMonitor and PodMonitor of a build (empty: they scrape both apps). */
function checkMonitors(objects: KubeObject[]): string[] {
  const problems: string[] = [];
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const services = of('Service') as (KubeObject & IService)[];
  const deployments = of('Deployment') as (KubeObject & IDeployment)[];
  for (const monitor of of('ServiceMonitor') as (Selecting & {
    spec: { endpoints: { port?: string }[] };
  })[]) {
    const selected = services.filter((s) => matches(monitor.spec.selector.matchLabels, s.metadata.labels));
    if (!selected.some((s) => s.metadata.name === 'orchestrator'))
      problems.push(`ServiceMonitor ${monitor.metadata.name} does not select the orchestrator Service`);
    for (const { port } of monitor.spec.endpoints)
      for (const service of selected)
        if (!service.spec?.ports?.some((p) => p.name === port))
          problems.push(
            `ServiceMonitor ${monitor.metadata.name}: Service ${service.metadata.name} has no port ${port}`,
          );
  }
  const workers = deployments.filter((d) => d.metadata.name.startsWith('tool-worker'));
  const podMonitors = of('PodMonitor') as (Selecting & {
    spec: { podMetricsEndpoints: { port?: string }[] };
  })[];
  for (const worker of workers) {
    const labels = worker.spec?.template.metadata?.labels;
    const monitor = podMonitors.find((m) => matches(m.spec.selector.matchLabels, labels));
    if (!monitor) {
      problems.push(`no PodMonitor selects the pods of ${worker.metadata.name}`);
      continue;
    }
    const ports = worker.spec?.template.spec?.containers.flatMap((c) => c.ports ?? []) ?? [];
    for (const { port } of monitor.spec.podMetricsEndpoints)
      if (!ports.some((p) => p.name === port))
        problems.push(
          `PodMonitor ${monitor.metadata.name}: ${worker.metadata.name} has no container port ${port}`,
        );
  }
  return problems;
}

describe('k8s/overlays/monitored', () => {
  it('ships the alerts, the scrape of both apps and the dashboard ConfigMap, in the namespace', () => {
    const objects = monitored();
    const kinds = objects.filter((o) => o.metadata.namespace !== 'switchyard').map((o) => o.kind);
    expect(kinds).toEqual([]);
    expect(checkMonitors(objects)).toEqual([]);
    const dashboard = objects.find(
      (o) => o.metadata.name === 'switchyard-grafana-dashboard',
    ) as KubeObject & {
      data: Record<string, string>;
    };
    expect(dashboard.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(JSON.parse(dashboard.data['switchyard.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(join(COMPONENT_DIR, 'grafana-dashboard.json'), 'utf8')),
    );
  });

  it('has the same alert rules as the compose Prometheus', () => {
    const rule = monitored().find((o) => o.kind === 'PrometheusRule') as KubeObject & { spec: unknown };
    const compose = readYaml(join(DOCKER_DIR, 'prometheus', 'alerts.yml')) as { groups: unknown };
    expect(compose.groups).toEqual((rule.spec as { groups: unknown }).groups);
  });

  it('rejects monitors that select nothing, name a missing port, or misspell a field', async () => {
    const objects = structuredClone(monitored());
    const serviceMonitor = objects.find((o) => o.kind === 'ServiceMonitor') as Selecting & {
      spec: { endpoints: { port: string }[] };
    };
    serviceMonitor.spec.endpoints[0] = { port: 'metrics' };
    const podMonitor = objects.find((o) => o.kind === 'PodMonitor') as Selecting;
    podMonitor.spec.selector.matchLabels['app.kubernetes.io/component'] = 'worker';
    expect(checkMonitors(objects)).toEqual([
      'ServiceMonitor switchyard-orchestrator: Service orchestrator has no port metrics',
      'no PodMonitor selects the pods of tool-worker-general',
      'no PodMonitor selects the pods of tool-worker-search',
    ]);
    (podMonitor.spec as Record<string, unknown>).podMetricEndpoints = [];
    expect((await validateObject(podMonitor)).join('\n')).toMatch(/unknown field spec\.podMetricEndpoints/);
  });
});

describe('the bundled Prometheus configs', () => {
  interface ScrapeConfig {
    job_name: string;
    static_configs?: { targets: string[] }[];
    dns_sd_configs?: { names: string[]; type: string; port: number }[];
  }
  const jobs = (path: string) => (readYaml(path) as { scrape_configs: ScrapeConfig[] }).scrape_configs;

  it('compose: scrapes the orchestrator and every tool-worker replica, loads the alerts, and Grafana the dashboard', () => {
    const compose = readYaml(join(DOCKER_DIR, 'compose.yaml')) as {
      services: Record<string, { volumes?: string[]; environment?: Record<string, string> }>;
    };
    const scrape = jobs(join(DOCKER_DIR, 'prometheus', 'prometheus.yml'));
    const port = compose.services.orchestrator?.environment?.PORT;
    expect(scrape.flatMap((j) => j.static_configs ?? []).flatMap((c) => c.targets)).toContain(
      `orchestrator:${port}`,
    );
    expect(scrape.flatMap((j) => j.dns_sd_configs ?? [])).toContainEqual({
      names: ['tool-worker'],
      type: 'A',
      port: Number(compose.services['tool-worker']?.environment?.WORKER_HTTP_PORT),
    });
    const mounted = (service: string) =>
      (compose.services[service]?.volumes ?? []).map((v) => v.split(':').slice(0, 2));
    const prometheus = readYaml(join(DOCKER_DIR, 'prometheus', 'prometheus.yml')) as { rule_files: string[] };
    for (const file of prometheus.rule_files)
      expect(mounted('prometheus').map(([, target]) => target)).toContain(file);
    const dashboard = mounted('grafana').find(([, target]) => target?.endsWith('.json'));
    expect(dashboard?.[0] && join(DOCKER_DIR, dashboard[0])).toBe(
      join(COMPONENT_DIR, 'grafana-dashboard.json'),
    );
  });

  it('self-contained: scrapes the workers through a headless Service that selects every worker pod', () => {
    const objects = render(join(K8S_DIR, 'overlays', 'self-contained'));
    const scrape = jobs(join(K8S_DIR, 'overlays', 'self-contained', 'prometheus.yml'));
    const [name] = scrape.flatMap((j) => j.dns_sd_configs ?? []).flatMap((c) => c.names);
    const service = objects.find(
      (o) => o.kind === 'Service' && `${o.metadata.name}.${o.metadata.namespace}.svc` === name,
    ) as (KubeObject & IService) | undefined;
    expect(service?.spec?.clusterIP).toBe('None');
    const workers = objects.filter(
      (o) => o.kind === 'Deployment' && o.metadata.name.startsWith('tool-worker'),
    ) as (KubeObject & IDeployment)[];
    expect(workers.length).toBeGreaterThan(0);
    for (const worker of workers)
      expect(matches(service?.spec?.selector ?? { none: 'x' }, worker.spec?.template.metadata?.labels)).toBe(
        true,
      );
  });
});
