/**
 * Static validation of deploy/: every kustomization (base and each overlay found under k8s/overlays)
 * rendered with `kubectl kustomize` and checked object by object against kubernetes-models / KEDA
 * models plus Switchyard's own invariants; the compose file and the Dockerfiles checked against the
 * repository. Each invariant also has a negative test on a deliberately broken copy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { PROCESS_NODE_FLAGS, parseConfig } from '@switchyard/contracts';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  checkCompose,
  checkDockerfile,
  checkScriptsInImage,
  type DockerfileExpectations,
  dockerignoreMatcher,
  parseDockerfile,
  stdioScripts,
  toolchainKeptByOmitDev,
  workspaceDirs,
} from './support/docker.ts';
import { checkIngresses, checkNetworkPolicies, checkServiceAccounts } from './support/exposure.ts';
import { DEPLOY_DIR, type Kustomization, kustomizations, REPO_ROOT, render } from './support/kustomize.ts';
import {
  appContainer,
  appContext,
  type Build,
  type BuildOptions,
  checkAppSecurity,
  checkBackends,
  checkConfigAgainstEnv,
  checkInClusterEndpoints,
  checkOrchestrator,
  checkPostgresOnly,
  checkProduction,
  checkReferences,
  checkSelfContained,
  checkWorkers,
  checkWorkloads,
  containerScripts,
  parseWithPlaceholders,
  workers,
} from './support/manifests.ts';
import { type KubeObject, modelPackages, validateObject } from './support/models.ts';

const DOCKER_DIR = join(DEPLOY_DIR, 'docker');
const KUSTOMIZATIONS = kustomizations();

/** Secrets an overlay deliberately leaves to the operator (see deploy/README.md "Secrets"). */
const PRODUCTION_SECRETS = [
  'switchyard-secrets',
  'switchyard-model-keys',
  'switchyard-redis',
  'switchyard-database',
];
const EXTERNAL_SECRETS: Record<string, string[]> = {
  production: PRODUCTION_SECRETS,
  // Production plus the monitoring component.
  monitored: PRODUCTION_SECRETS,
};
const optionsFor = (name: string): BuildOptions => ({ externalSecrets: EXTERNAL_SECRETS[name] ?? [] });

function build(kustomization: Kustomization): Build {
  return { name: kustomization.name, objects: render(kustomization.dir) };
}

function baseBuild(): Build {
  const base = KUSTOMIZATIONS.find((k) => k.name === 'base');
  if (!base) throw new Error('deploy/k8s/base is missing');
  return build(base);
}

/** A deep copy of the base to break on purpose. */
function brokenBase(): Build {
  return structuredClone(baseBuild());
}

/** A deep copy of the postgres-only overlay to break on purpose. */
function postgresOnly(): Build {
  const overlay = KUSTOMIZATIONS.find((k) => k.name === 'postgres-only');
  if (!overlay) throw new Error('deploy/k8s/overlays/postgres-only is missing');
  return structuredClone(build(overlay));
}

function find<T>(b: Build, kind: string, name: string): T {
  const found = b.objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} not in ${b.name}`);
  return found as unknown as T;
}

function mustContext(b: Build) {
  const { context, problems } = appContext(b, optionsFor(b.name));
  if (!context) throw new Error(`no app context for ${b.name}: ${problems.join('; ')}`);
  return context;
}

function toolWorkerDockerfile(): string {
  return readFileSync(join(DOCKER_DIR, 'Dockerfile.tool-worker'), 'utf8');
}

describe('kustomizations', () => {
  it('are the base and every overlay directory, including self-contained, production and postgres-only', () => {
    const names = KUSTOMIZATIONS.map((k) => k.name);
    expect(names[0]).toBe('base');
    expect(names).toEqual(expect.arrayContaining(['self-contained', 'production', 'postgres-only']));
  });
});

describe.each(KUSTOMIZATIONS)('k8s/$name', (kustomization) => {
  const options = optionsFor(kustomization.name);
  const current = () => build(kustomization);

  it('renders with kubectl kustomize', () => {
    expect(current().objects.length).toBeGreaterThan(0);
  });

  it(`validates every object against ${modelPackages()} (unknown kinds and fields fail)`, async () => {
    const problems = (await Promise.all(current().objects.map((o) => validateObject(o)))).flat();
    expect(problems).toEqual([]);
  });

  it('has no two objects of one kind with one name', () => {
    const ids = current().objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('mounts one switchyard.yaml that parseConfig accepts, with one SWITCHYARD_PREFIX for every app', () => {
    const { context, problems } = appContext(current(), options);
    expect(problems).toEqual([]);
    expect(Object.keys(context?.config.servers ?? {}).length).toBeGreaterThan(0);
  });

  it('gives every app container each $VAR the config needs (parseConfig with the container env)', () => {
    expect(checkConfigAgainstEnv(current(), options)).toEqual([]);
  });

  it('resolves every ConfigMap, Secret, volume, scale target and selector reference', () => {
    expect(checkReferences(current(), options)).toEqual([]);
  });

  it('has matching selectors, resource requests, memory limits and pinned images', () => {
    expect(checkWorkloads(current())).toEqual([]);
  });

  it('runs the apps as non-root without privilege escalation', () => {
    expect(checkAppSecurity(current())).toEqual([]);
  });

  it('runs each component as its own ServiceAccount without an API token', () => {
    expect(checkServiceAccounts(current())).toEqual([]);
  });

  it('NetworkPolicies (if any) open only the HTTP ports and let the apps reach DNS and their stores; Ingresses route to the orchestrator', () => {
    expect(checkNetworkPolicies(current(), options)).toEqual([]);
    expect(checkIngresses(current())).toEqual([]);
  });

  it('orchestrator: >= 2 replicas, probes, scrape annotations, topology spread, Service, CPU HPA, PDB', () => {
    expect(checkOrchestrator(current(), options)).toEqual([]);
  });

  it('workers: a ScaledObject each (per server a redis or postgresql trigger, as the backend is), grace period, probes, PDB', () => {
    const b = current();
    expect(checkWorkers(b, mustContext(b), options)).toEqual([]);
  });

  it('every app picks the same backend, and on postgres reads the same DATABASE_URL', () => {
    const b = current();
    expect(checkBackends(b, mustContext(b), options)).toEqual([]);
  });

  it('runs only scripts the tool-worker image contains (stdio servers, sidecars)', () => {
    const b = current();
    const scripts = [
      ...stdioScripts(mustContext(b).config, `${b.name} switchyard.yaml`),
      ...containerScripts(b),
    ];
    expect(checkScriptsInImage(toolWorkerDockerfile(), REPO_ROOT, scripts)).toEqual([]);
  });

  if (kustomization.name !== 'base') {
    it('points in-cluster endpoints (Redis, PostgreSQL, OTLP, Prometheus) at Services of the build', () => {
      expect(checkInClusterEndpoints(current(), options)).toEqual([]);
    });
  }

  if (kustomization.name === 'self-contained') {
    it('runs Redis (appendonly, PVC), PostgreSQL (PVC) and Jaeger (OTLP) with matching credentials', () => {
      expect(checkSelfContained(current(), options)).toEqual([]);
    });
  }

  if (kustomization.name === 'postgres-only') {
    it('runs PostgreSQL alone: no Redis object or REDIS_URL, SWITCHYARD_BACKEND=postgres, KEDA as a read-only role', () => {
      const b = current();
      expect(checkPostgresOnly(b, mustContext(b), options)).toEqual([]);
      expect(b.objects.filter((o) => /redis/i.test(o.metadata.name)).map((o) => o.metadata.name)).toEqual([]);
      expect(JSON.stringify(b.objects.filter((o) => o.kind !== 'ConfigMap'))).not.toMatch(/REDIS_URL/);
      for (const app of [...workers(b), find<IDeployment>(b, 'Deployment', 'orchestrator')]) {
        const names = appContainer(app)?.env?.map((e) => e.name) ?? [];
        expect(names, app.metadata?.name).toContain('DATABASE_URL');
      }
      const triggers = b.objects
        .filter((o): o is KubeObject & IScaledObject => o.kind === 'ScaledObject')
        .flatMap((o) => o.spec.triggers);
      expect(triggers.map((t) => t.metadata.query).sort()).toEqual(
        ['notes', 'recorder', 'search', 'slow'].map(
          (server) =>
            `SELECT count(*) FROM switchyard_queues.job WHERE queue = 'tools.{${server}}' AND state IN ('waiting', 'delayed')`,
        ),
      );
      expect(new Set(triggers.map((t) => `${t.type} ${t.metadata.targetQueryValue}`))).toEqual(
        new Set(['postgresql 10']),
      );
    });
  }

  if (kustomization.name === 'production') {
    it('pins registry images, renders no Secret and runs more orchestrators than the base', () => {
      expect(checkProduction(current(), baseBuild())).toEqual([]);
    });

    it('has an Ingress and a NetworkPolicy for each app (components ingress and network-policy)', () => {
      const kinds = current().objects.map((o) => `${o.kind} ${o.metadata.name}`);
      expect(kinds).toEqual(
        expect.arrayContaining([
          'Ingress switchyard',
          'NetworkPolicy orchestrator',
          'NetworkPolicy tool-worker',
        ]),
      );
    });
  }
});

describe('the checks reject broken manifests', () => {
  const options = optionsFor('base');

  it('an unknown apiVersion/kind', async () => {
    const problems = await validateObject({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
    });
    expect(problems.join('\n')).toMatch(/unknown apiVersion\/kind example\.com\/v1\/Widget/);
  });

  it('a schema violation and a misspelt field', async () => {
    const deployment = structuredClone(find<IDeployment>(baseBuild(), 'Deployment', 'orchestrator'));
    const spec = deployment.spec as unknown as Record<string, unknown>;
    spec.replicas = 'two';
    const container = deployment.spec?.template.spec?.containers[0] as unknown as Record<string, unknown>;
    container.readinesProbe = container.readinessProbe;
    const problems = (await validateObject(deployment)).join('\n');
    expect(problems).toMatch(/spec\/replicas must be integer/);
    expect(problems).toMatch(/unknown field spec\.template\.spec\.containers\[0\]\.readinesProbe/);
  });

  it('a ScaledObject with a misspelt field', async () => {
    const scaled = structuredClone(find<IScaledObject>(baseBuild(), 'ScaledObject', 'tool-worker-search'));
    (scaled.spec as unknown as Record<string, unknown>).maxReplicas = 3;
    expect((await validateObject(scaled)).join('\n')).toMatch(/unknown field spec\.maxReplicas/);
  });

  it('a worker whose ScaledObject lost a redis trigger, its prometheus trigger, or has a typo in trigger metadata', () => {
    const b = brokenBase();
    const general = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-general');
    general.spec.triggers = general.spec.triggers.filter(
      (t) => t.metadata.listName !== 'switchyard:tools.{slow}:wait',
    );
    const search = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-search');
    search.spec.triggers = search.spec.triggers.filter((t) => t.type !== 'prometheus');
    const notes = general.spec.triggers.find((t) => t.type === 'redis');
    if (notes) notes.metadata = { ...notes.metadata, listname: 'x' };
    const problems = checkWorkers(b, mustContext(b), options).join('\n');
    expect(problems).toMatch(/0 redis triggers on switchyard:tools\.\{slow\}:wait/);
    expect(problems).toMatch(/tool-worker-search: 0 prometheus triggers/);
    expect(problems).toMatch(/unknown metadata key listname/);
  });

  it('a prometheus query that double-counts replicas or misses a server or state', () => {
    const b = brokenBase();
    const general = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-general');
    const trigger = general.spec.triggers.find((t) => t.type === 'prometheus');
    if (trigger)
      trigger.metadata.query = 'sum(switchyard_queue_jobs{server=~"notes|slow",state=~"waiting|delayed"})';
    const problems = checkWorkers(b, mustContext(b), options).join('\n');
    expect(problems).toMatch(/de-duplicate replicas/);
    expect(problems).toMatch(/covers servers \[notes, slow\]/);
    expect(problems).toMatch(/misses states prioritized/);
  });

  it('a grace period shorter than the longest call + shutdownGraceMs, and a serialized group over the cap', () => {
    const b = brokenBase();
    const general = find<IDeployment>(b, 'Deployment', 'tool-worker-general');
    if (general.spec?.template.spec) general.spec.template.spec.terminationGracePeriodSeconds = 60;
    find<IScaledObject>(b, 'ScaledObject', 'tool-worker-general').spec.maxReplicaCount = 10;
    const problems = checkWorkers(b, mustContext(b), options).join('\n');
    expect(problems).toMatch(
      /terminationGracePeriodSeconds 60 is not longer than the longest tool call \(30000 ms\)/,
    );
    expect(problems).toMatch(/maxReplicaCount 10 for serialized servers/);
  });

  it('a server no worker serves, and a worker without a PodDisruptionBudget or probes', () => {
    const b = brokenBase();
    const general = find<IDeployment>(b, 'Deployment', 'tool-worker-general');
    const container = general.spec && appContainer(general);
    const servers = container?.env?.find((e) => e.name === 'WORKER_SERVERS');
    if (servers) servers.value = 'notes,slow';
    if (container) delete container.readinessProbe;
    b.objects = b.objects.filter(
      (o) => !(o.kind === 'PodDisruptionBudget' && o.metadata.name === 'tool-worker-general'),
    );
    const problems = checkWorkers(b, mustContext(b), options).join('\n');
    expect(problems).toMatch(/server recorder is served by 0 worker Deployments/);
    expect(problems).toMatch(/tool-worker-general: no PodDisruptionBudget/);
    expect(problems).toMatch(/tool-worker-general: container tool-worker has no readinessProbe/);
  });

  it('an HPA that does not target the orchestrator, and an orchestrator liveness probe on the wrong path', () => {
    const b = brokenBase();
    const hpa = b.objects.find((o) => o.kind === 'HorizontalPodAutoscaler') as KubeObject & {
      spec: { scaleTargetRef: { name: string } };
    };
    hpa.spec.scaleTargetRef.name = 'orchestrater';
    const orchestrator = find<IDeployment>(b, 'Deployment', 'orchestrator');
    const probe = orchestrator.spec && appContainer(orchestrator)?.livenessProbe?.httpGet;
    if (probe) probe.path = '/health/ready';
    expect(checkOrchestrator(b, options).join('\n')).toMatch(
      /expected one HorizontalPodAutoscaler targeting it, found 0/,
    );
    expect(checkOrchestrator(b, options).join('\n')).toMatch(/livenessProbe path is \/health\/ready/);
    expect(checkReferences(b, options).join('\n')).toMatch(
      /target Deployment orchestrater is not in the build/,
    );
  });

  it('a config that parseConfig rejects, and a $VAR no Secret provides', () => {
    const b = brokenBase();
    const map = b.objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('switchyard-config'),
    ) as (KubeObject & IConfigMap) | undefined;
    if (!map?.data) throw new Error('no switchyard-config ConfigMap');
    const text = map.data['switchyard.yaml'] ?? '';
    map.data['switchyard.yaml'] = text.replace('concurrency: 16', 'concurrency: 0');
    expect(appContext(b, options).problems.join('\n')).toMatch(/servers\.search\.concurrency/);
    map.data['switchyard.yaml'] = text.replace('RESEARCH_TEAM_KEY}', 'MISSING_TEAM_KEY}');
    expect(checkConfigAgainstEnv(b, options).join('\n')).toMatch(
      /environment variable MISSING_TEAM_KEY is not set/,
    );
  });

  it('apps on different SWITCHYARD_PREFIXes', () => {
    const b = brokenBase();
    const search = find<IDeployment>(b, 'Deployment', 'tool-worker-search');
    const container = search.spec && appContainer(search);
    container?.env?.push({ name: 'SWITCHYARD_PREFIX', value: 'other' });
    expect(appContext(b, options).problems.join('\n')).toMatch(/SWITCHYARD_PREFIX other/);
  });

  it('self-contained: Redis without AOF, a DATABASE_URL with the wrong password, a Redis host with no Service', () => {
    const overlay = KUSTOMIZATIONS.find((k) => k.name === 'self-contained');
    if (!overlay) throw new Error('no self-contained overlay');
    const b = structuredClone(build(overlay));
    const redis = find<KubeObject & { spec: { template: { spec: { containers: { args?: string[] }[] } } } }>(
      b,
      'StatefulSet',
      'redis',
    );
    const container = redis.spec.template.spec.containers[0];
    if (container) container.args = ['redis-server'];
    const database = find<KubeObject & { data: Record<string, string> }>(b, 'Secret', 'switchyard-database');
    database.data.DATABASE_URL = Buffer.from('postgres://switchyard:wrong@postgres:5432/switchyard').toString(
      'base64',
    );
    const redisSecret = find<KubeObject & { data: Record<string, string> }>(b, 'Secret', 'switchyard-redis');
    redisSecret.data.REDIS_URL = Buffer.from('redis://redis-master:6379/2').toString('base64');
    const options = optionsFor('self-contained');
    expect(checkWorkers(b, mustContext(b), options).join('\n')).toMatch(/reads database 0, REDIS_URL uses 2/);
    expect(checkSelfContained(b, options).join('\n')).toMatch(/redis does not run with --appendonly yes/);
    expect(checkSelfContained(b, options).join('\n')).toMatch(/DATABASE_URL credentials .* do not match/);
    expect(checkInClusterEndpoints(b, options).join('\n')).toMatch(
      /host redis-master is not a Service of this build/,
    );
  });

  it('production: development images, rendered placeholder Secrets, no more orchestrators than the base', () => {
    const problems = checkProduction(baseBuild(), baseBuild()).join('\n');
    expect(problems).toMatch(/image switchyard\/orchestrator:0\.1\.0 is not from a registry host/);
    expect(problems).toMatch(/renders Secrets/);
    expect(problems).toMatch(/orchestrator replicas 2 not above/);
  });

  it('postgres-only: a Redis Service and REDIS_URL brought back, a worker without DATABASE_URL or on another backend', () => {
    const b = postgresOnly();
    const options = optionsFor('postgres-only');
    b.objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'redis', namespace: 'switchyard' },
      spec: { selector: { app: 'redis' }, ports: [{ port: 6379 }] },
    });
    const general = appContainer(find<IDeployment>(b, 'Deployment', 'tool-worker-general'));
    general?.env?.push({ name: 'REDIS_URL', value: 'redis://redis:6379' });
    const search = appContainer(find<IDeployment>(b, 'Deployment', 'tool-worker-search'));
    if (search) search.env = search.env?.filter((e) => e.name !== 'DATABASE_URL');
    const postgresOnlyProblems = checkPostgresOnly(b, mustContext(b), options).join('\n');
    expect(postgresOnlyProblems).toMatch(/Service redis is a Redis object/);
    expect(postgresOnlyProblems).toMatch(
      /Deployment tool-worker-general: container tool-worker sets REDIS_URL/,
    );
    expect(checkBackends(b, mustContext(b), options).join('\n')).toMatch(
      /Deployment tool-worker-search: backend postgres without DATABASE_URL/,
    );
    general?.env?.push({ name: 'SWITCHYARD_BACKEND', value: 'redis' });
    expect(checkBackends(b, mustContext(b), options).join('\n')).toMatch(
      /the apps pick different backends: .*tool-worker-general: redis \(SWITCHYARD_BACKEND\)/,
    );
    expect(checkPostgresOnly(b, mustContext(b), options).join('\n')).toMatch(
      /Deployment tool-worker-general: SWITCHYARD_BACKEND is not postgres/,
    );
  });

  it("postgres-only: triggers on the wrong schema, counting active jobs, missing a server, as the apps' role", () => {
    const b = postgresOnly();
    const options = optionsFor('postgres-only');
    const general = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-general');
    const [notes, slow] = general.spec.triggers;
    if (!notes || !slow) throw new Error('tool-worker-general has fewer than 2 triggers');
    notes.metadata.query = (notes.metadata.query ?? '').replace('switchyard_queues', 'switchyard');
    slow.metadata.query = (slow.metadata.query ?? '').replace("'delayed'", "'active'");
    general.spec.triggers = general.spec.triggers.filter((t) => t.name !== 'backlog-recorder');
    const search = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-search');
    const [backlog] = search.spec.triggers;
    if (backlog) backlog.metadata = { ...backlog.metadata, userName: 'switchyard', targetQueryvalue: '10' };
    const problems = checkWorkers(b, mustContext(b), options).join('\n');
    expect(problems).toMatch(
      /reads schema switchyard; SWITCHYARD_PREFIX switchyard keeps its queues in switchyard_queues/,
    );
    expect(problems).toMatch(/backlog-slow misses states delayed/);
    expect(problems).toMatch(/backlog-slow counts active jobs as backlog/);
    expect(problems).toMatch(/0 postgresql triggers on tools\.\{recorder\} \(server recorder\); expected 1/);
    expect(problems).toMatch(/logs in as the apps' role switchyard; give KEDA a read-only role/);
    expect(problems).toMatch(/unknown metadata key targetQueryvalue/);
    expect(checkPostgresOnly(b, mustContext(b), options).join('\n')).toMatch(
      /makes role switchyard_keda, trigger backlog-search logs in as switchyard/,
    );
  });

  it('postgres-only: a redis trigger left on a PostgreSQL deployment, a KEDA role Job on another schema', () => {
    const b = postgresOnly();
    const options = optionsFor('postgres-only');
    const search = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-search');
    search.spec.triggers.push({
      type: 'redis',
      metadata: { listName: 'switchyard:tools.{search}:wait', listLength: '10' },
    });
    expect(checkWorkers(b, mustContext(b), options).join('\n')).toMatch(
      /redis trigger on switchyard:tools\.\{search\}:wait on a PostgreSQL deployment/,
    );
    const job = find<KubeObject & { spec: { template: { spec: { containers: IContainer[] } } } }>(
      b,
      'Job',
      'switchyard-keda-role',
    );
    const schema = job.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'QUEUE_SCHEMA');
    if (schema) schema.value = 'switchyard';
    expect(checkPostgresOnly(b, mustContext(b), options).join('\n')).toMatch(
      /QUEUE_SCHEMA is switchyard, the apps' queue schema is switchyard_queues/,
    );
  });

  it('a postgresql trigger on a Redis deployment', () => {
    const b = brokenBase();
    const search = find<IScaledObject>(b, 'ScaledObject', 'tool-worker-search');
    search.spec.triggers.push({
      type: 'postgresql',
      name: 'backlog-pg',
      metadata: {
        query:
          "SELECT count(*) FROM switchyard_queues.job WHERE queue = 'tools.{search}' AND state IN ('waiting','delayed')",
      },
    });
    expect(checkWorkers(b, mustContext(b), options).join('\n')).toMatch(
      /postgresql trigger backlog-pg on a Redis deployment/,
    );
  });

  it('a reference to a Secret that is neither rendered nor declared external', () => {
    const b = brokenBase();
    b.objects = b.objects.filter((o) => !(o.kind === 'Secret' && o.metadata.name === 'switchyard-redis'));
    const problems = checkReferences(b, options).join('\n');
    expect(problems).toMatch(/Secret switchyard-redis is not in the build/);
    expect(checkReferences(b, { externalSecrets: ['switchyard-redis'] })).toEqual([]);
  });
});

describe('switchyard.yaml files', () => {
  it('the base config is production-like: remote search server, teams with keys from the environment', () => {
    const raw = parseYaml(readFileSync(join(DEPLOY_DIR, 'k8s/base/switchyard.yaml'), 'utf8')) as {
      servers: Record<string, { transport?: string; url?: string }>;
      teams: Record<string, { apiKeys: string[] }>;
    };
    expect(raw.servers.search?.transport).toBe('http');
    for (const team of Object.values(raw.teams)) {
      for (const key of team.apiKeys) expect(key).toMatch(/^\$\{[A-Z_]+\}$/);
    }
    expect(() => parseConfig(raw, {})).toThrow(/environment variable .* is not set/);
  });

  it('the root switchyard.yaml, mounted by compose, parses', () => {
    expect(() =>
      parseWithPlaceholders(readFileSync(join(REPO_ROOT, 'switchyard.yaml'), 'utf8')),
    ).not.toThrow();
  });
});

describe('Dockerfiles', () => {
  const common = {
    repoRoot: REPO_ROOT,
    runtimeImage: 'node:24-bookworm-slim',
    mustCopy: ['switchyard.yaml'],
  };
  /** Every workspace lib an app depends on must reach the image compiled, or the app cannot start. */
  const compiledLibsOf = (app: string): string[] => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'apps', app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    return Object.keys(manifest.dependencies)
      .filter((name) => name.startsWith('@switchyard/'))
      .map((name) => `libs/${name.slice('@switchyard/'.length)}/dist`);
  };
  const read = (name: string) => readFileSync(join(DOCKER_DIR, name), 'utf8');
  const ignore = (name: string) => {
    try {
      return read(`${name}.dockerignore`);
    } catch {
      return undefined;
    }
  };
  const orchestrator: DockerfileExpectations = {
    ...common,
    dockerignore: ignore('Dockerfile.orchestrator'),
    main: 'apps/orchestrator/dist/main.js',
    port: 3000,
    mustCopy: [...common.mustCopy, ...compiledLibsOf('orchestrator'), 'apps/orchestrator/dist'],
    mustNotCopy: ['apps/tool-worker', 'examples'],
  };
  const worker: DockerfileExpectations = {
    ...common,
    dockerignore: ignore('Dockerfile.tool-worker'),
    main: 'apps/tool-worker/dist/main.js',
    port: 9464,
    mustCopy: [
      ...common.mustCopy,
      ...compiledLibsOf('tool-worker'),
      'apps/tool-worker/dist',
      'examples/mcp-servers/dist',
    ],
    mustNotCopy: ['apps/orchestrator'],
  };

  it('Dockerfile.orchestrator: npm ci stages, build stage, non-root, HEALTHCHECK, `node <compiled main>` on Node 24', () => {
    expect(checkDockerfile(read('Dockerfile.orchestrator'), orchestrator)).toEqual([]);
  });

  it('Dockerfile.tool-worker: the same, plus the compiled example MCP servers', () => {
    expect(checkDockerfile(read('Dockerfile.tool-worker'), worker)).toEqual([]);
  });

  it('the tool-worker image holds every stdio server script of the root switchyard.yaml', () => {
    const config = parseWithPlaceholders(readFileSync(join(REPO_ROOT, 'switchyard.yaml'), 'utf8'));
    expect(
      checkScriptsInImage(read('Dockerfile.tool-worker'), REPO_ROOT, stdioScripts(config, 'switchyard.yaml')),
    ).toEqual([]);
  });

  it('renders the command each image runs: compiled JavaScript under node, no tsx or typescript', () => {
    for (const name of ['Dockerfile.orchestrator', 'Dockerfile.tool-worker']) {
      const { stages } = parseDockerfile(read(name));
      const final = stages[stages.length - 1];
      const argv = ['ENTRYPOINT', 'CMD'].flatMap((keyword) => {
        const instruction = final?.instructions.filter((i) => i.keyword === keyword).pop();
        return instruction ? (JSON.parse(instruction.args) as string[]) : [];
      });
      expect(final?.image, name).toMatch(/^node:24(\b|-)/);
      expect(argv.join(' '), name).toMatch(
        /^\/usr\/bin\/tini -- node (--[a-z-]+(=\S+)? )*apps\/[a-z-]+\/dist\/main\.js$/,
      );
      expect(argv.join(' '), name).not.toMatch(/tsx|typescript|\.ts\b/);
    }
  });

  it('runs each app with the Node flags every Switchyard process runs with, in the images and the npm scripts', () => {
    // One list (libs/contracts/src/process-flags.ts) that the test deployments and the demo take as code.
    expect(PROCESS_NODE_FLAGS.length).toBeGreaterThan(0);
    for (const [name, app] of [
      ['Dockerfile.orchestrator', 'orchestrator'],
      ['Dockerfile.tool-worker', 'tool-worker'],
    ] as const) {
      const { stages } = parseDockerfile(read(name));
      const cmd = stages
        .at(-1)
        ?.instructions.filter((i) => i.keyword === 'CMD')
        .pop();
      const argv = cmd ? (JSON.parse(cmd.args) as string[]) : [];
      expect(argv.slice(0, 1 + PROCESS_NODE_FLAGS.length), name).toEqual(['node', ...PROCESS_NODE_FLAGS]);
      expect(argv.at(-1), name).toBe(`apps/${app}/dist/main.js`);
    }
    const scripts = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.orchestrator).toBe(`node ${PROCESS_NODE_FLAGS.join(' ')} apps/orchestrator/dist/main.js`);
    expect(scripts.worker).toBe(`node ${PROCESS_NODE_FLAGS.join(' ')} apps/tool-worker/dist/main.js`);
  });

  it('the TypeScript toolchain is dev-only, and what --omit=dev still installs is removed', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    expect(manifest.dependencies?.tsx).toBeUndefined();
    expect(manifest.devDependencies?.tsx).toBeDefined();
    // valibot (under @bull-board/api) names typescript as an optional peer: npm keeps it as devOptional.
    const lockfile = readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8');
    expect(toolchainKeptByOmitDev(lockfile)).toContain('typescript');
    expect(toolchainKeptByOmitDev(lockfile)).not.toContain('tsx');
    const lock = JSON.parse(lockfile) as { packages: Record<string, { dev?: boolean }> };
    const tsxEntry = lock.packages['node_modules/tsx'];
    if (tsxEntry) delete tsxEntry.dev; // as if tsx were a production dependency again
    expect(toolchainKeptByOmitDev(JSON.stringify(lock))).toContain('tsx');
  });

  it('rejects an image that runs TypeScript, keeps the toolchain or ships sources', () => {
    const text = read('Dockerfile.orchestrator');
    const tsx = text.replace(
      '"--enable-source-maps", "apps/orchestrator/dist/main.js"',
      '"--import", "tsx", "apps/orchestrator/dist/main.js"',
    );
    expect(checkDockerfile(tsx, orchestrator).join('\n')).toMatch(/node runs with a loader/);
    const source = text.replace('"apps/orchestrator/dist/main.js"', '"apps/orchestrator/src/main.ts"');
    expect(checkDockerfile(source, orchestrator).join('\n')).toMatch(
      /does not run `node apps\/orchestrator\/dist\/main\.js`/,
    );
    const keepsTypescript = text.replace(
      ' \\\n    && rm -rf node_modules/typescript node_modules/@typescript node_modules/.bin/tsc',
      '',
    );
    expect(keepsTypescript).not.toBe(text);
    expect(checkDockerfile(keepsTypescript, orchestrator).join('\n')).toMatch(/deps stage keeps typescript/);
    const fullInstall = text.replace('COPY --from=deps /app ./', 'COPY --from=build /app ./');
    expect(checkDockerfile(fullInstall, orchestrator).join('\n')).toMatch(
      /node_modules come from build, which does not npm ci --omit=dev/,
    );
    const sources = text.replace(
      'COPY switchyard.yaml ./',
      'COPY switchyard.yaml ./\nCOPY --from=build /app/apps/orchestrator/src apps/orchestrator/src',
    );
    expect(checkDockerfile(sources, orchestrator).join('\n')).toMatch(
      /copies \/app\/apps\/orchestrator\/src from build, not a dist\/ folder/,
    );
    const oldNode = text.replace(
      'ARG NODE_IMAGE=node:24-bookworm-slim',
      'ARG NODE_IMAGE=node:20-bookworm-slim',
    );
    expect(checkDockerfile(oldNode, orchestrator).join('\n')).toMatch(
      /final stage is FROM node:20-bookworm-slim/,
    );
    const notCompiled = text.replace(/ \\\n {4}&& npx tsc -p apps\/orchestrator\/tsconfig\.build\.json/, '');
    expect(notCompiled).not.toBe(text);
    expect(checkDockerfile(notCompiled, orchestrator).join('\n')).toMatch(
      /build stage does not compile apps\/orchestrator/,
    );
  });

  it('rejects a missing COPY source, a root final stage, no HEALTHCHECK and a missed workspace', () => {
    const broken = read('Dockerfile.orchestrator')
      .replace(
        'COPY apps/orchestrator/src apps/orchestrator/src',
        'COPY apps/orchestrator/source apps/orchestrator/src',
      )
      .replace('USER node', 'USER root')
      .replace(/HEALTHCHECK[^\n]*\\\n[^\n]*\n/, '')
      .replace('COPY scripts/package.json scripts/\n', '');
    const problems = checkDockerfile(broken, orchestrator).join('\n');
    expect(problems).toMatch(/COPY apps\/orchestrator\/source: no such path/);
    expect(problems).toMatch(/final stage runs as root/);
    expect(problems).toMatch(/no HEALTHCHECK/);
    expect(problems).toMatch(/deps stage does not copy scripts\/package\.json/);
    expect(workspaceDirs(REPO_ROOT)).toContain('deploy');
  });

  it('rejects a COPY of a path the .dockerignore excludes', () => {
    const problems = checkDockerfile(read('Dockerfile.orchestrator'), {
      ...orchestrator,
      dockerignore: `${orchestrator.dockerignore ?? ''}\nlibs\n`,
    });
    expect(problems.join('\n')).toMatch(/COPY libs\/contracts\/src: excluded by the \.dockerignore/);
    expect(dockerignoreMatcher('**/node_modules\n!keep/node_modules')('apps/x/node_modules/y')).toBe(true);
    expect(dockerignoreMatcher('**/node_modules\n!keep/node_modules')('keep/node_modules')).toBe(false);
  });

  it('parses continuation lines and ARG-substituted FROM', () => {
    const dockerfile = ['ARG BASE=node:20', 'FROM $BASE AS a', 'RUN echo \\', '  one', 'FROM a', ''].join(
      '\n',
    );
    const { stages } = parseDockerfile(dockerfile);
    expect(stages.map((s) => s.image)).toEqual(['node:20', 'a']);
    expect(stages[0]?.instructions[0]?.args).toBe('echo    one');
  });
});

describe('compose.yaml', () => {
  const text = readFileSync(join(DOCKER_DIR, 'compose.yaml'), 'utf8');

  it('has redis (appendonly, volume), postgres, jaeger (OTLP), orchestrator and 2 tool workers, wired together', () => {
    expect(checkCompose(text, DOCKER_DIR, REPO_ROOT)).toEqual([]);
  });

  it('rejects redis without appendonly, one worker, a short stop grace period and a wrong Redis host', () => {
    const broken = text
      .replace('command: [redis-server, --appendonly, "yes"]', 'command: [redis-server]')
      .replace('replicas: 2', 'replicas: 1')
      .replace('stop_grace_period: 130s', 'stop_grace_period: 30s')
      .replace('REDIS_URL: redis://redis:6379', 'REDIS_URL: redis://cache:6379');
    const problems = checkCompose(broken, DOCKER_DIR, REPO_ROOT).join('\n');
    expect(problems).toMatch(/redis does not run with --appendonly yes/);
    expect(problems).toMatch(/deploy\.replicas is 1/);
    expect(problems).toMatch(/stop_grace_period 30s is not longer/);
    expect(problems).toMatch(/REDIS_URL redis:\/\/cache:6379 does not point at a compose service/);
  });
});
