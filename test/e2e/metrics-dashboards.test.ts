import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { REPO_ROOT } from '../support/paths.ts';
import type { TestProcess } from '../support/processes.ts';
import { metricNames, scrapedNames } from '../support/promql-metric-names.ts';

const MONITORING = join(REPO_ROOT, 'deploy/k8s/components/monitoring');
/** Series Prometheus makes itself for every target: in no scrape, yet real. */
const SYNTHETIC = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; definition?: string }[] };
}

/** Every PromQL expression the shipped dashboard and alert rules evaluate, with where it is. */
function shippedQueries(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as Dashboard;
  const rules = parseYaml(readFileSync(join(MONITORING, 'alert-rules.yaml'), 'utf8')) as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  return [
    ...dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
    ),
    // label_values(metric, label): its first argument is a metric name.
    ...dashboard.templating.list.flatMap((variable) => {
      const metric = /^label_values\((\w+),/.exec(variable.definition ?? '')?.[1];
      return metric ? [{ where: `variable $${variable.name}`, expr: metric }] : [];
    }),
    ...rules.spec.groups.flatMap((group) =>
      group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
    ),
  ];
}

/** The value of one sample of a scrape, or undefined when the scrape has no such series. */
function sample(exposition: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of exposition.split('\n')) {
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

/**
 * What the shipped monitoring reads exists: every metric the Grafana dashboard and the alert rules query
 * is in a real scrape of the orchestrator or a worker after a few jobs, and the new series have their
 * labels and move (an HTTP request, a finished job, a waiting call, a live worker).
 */
describe('metrics behind the dashboard and the alerts', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let worker: TestProcess;
  let workerUrl: string;
  let okJob: string;

  const scrape = async (url: string) => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  };

  beforeAll(async () => {
    deployment = new Deployment('dashboards', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
    }));
    worker = await deployment.startWorker({ id: 'w-dash', servers: ['search', 'notes'] });
    const listening = await worker.waitFor((log) => log.msg === 'worker http listening', 'the worker port');
    workerUrl = `http://127.0.0.1:${listening.port}`;
    orchestrator = await deployment.startOrchestrator('o-dash');
    const api = orchestrator.api('alpha');
    const ok = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'a' } }],
    });
    const failed = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'search__get_document', arguments: { id: 'nope' } }],
    });
    okJob = ok.body.id;
    await api.finished(okJob);
    await api.finished(failed.body.id);
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('has in a real scrape every metric the dashboard and the alert rules query', async () => {
    const scraped = new Set([
      ...scrapedNames(await scrape(orchestrator.url)),
      ...scrapedNames(await scrape(workerUrl)),
      ...SYNTHETIC,
    ]);
    const queries = shippedQueries();
    expect(queries.length).toBeGreaterThan(15);
    const missing = queries.flatMap(({ where, expr }) => {
      const names = metricNames(expr);
      if (names.length === 0) return [`${where}: reads no metric (${expr})`];
      return names.filter((name) => !scraped.has(name)).map((name) => `${where}: ${name}`);
    });
    expect(missing).toEqual([]);
  });

  it('finds the metric names of PromQL, not its functions, keywords, labels or durations', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, server) (rate(a_bucket{server=~"$server",x="y z"}[$__rate_interval]))) ' +
          '> 1e3 and on (server) max without (state) (b offset 5m) unless c:recorded',
      ).sort(),
    ).toEqual(['a_bucket', 'b', 'c:recorded']);
    expect(
      metricNames('max by (server) (x) == 0 and on (server) max by(server) (y{state=~"a|b"}) > 0'),
    ).toEqual(['x', 'y']);
  });

  it('counts HTTP requests by route template and status, never by a job id', async () => {
    const metrics = () => scrape(orchestrator.url);
    const route = {
      http_request_method: 'GET',
      http_route: '/v1/jobs/:id',
      http_response_status_code: '200',
    };
    const before = sample(await metrics(), 'http_server_request_duration_seconds_count', route) ?? 0;
    expect((await orchestrator.api('alpha').job(okJob)).status).toBe('succeeded');
    const after = await metrics();
    expect(sample(after, 'http_server_request_duration_seconds_count', route)).toBe(before + 1);
    expect(sample(after, 'http_server_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(
      before + 1,
    );
    // An unknown route is a 404 under no route template.
    expect((await fetch(`${orchestrator.url}/v1/nowhere/${okJob}`)).status).toBe(404);
    const unmatched = { http_request_method: 'GET', http_route: '', http_response_status_code: '404' };
    expect(sample(await metrics(), 'http_server_request_duration_seconds_count', unmatched)).toBeGreaterThan(
      0,
    );
    expect(after).not.toContain(okJob);
  });

  it("counts a worker's HTTP requests under the same histogram, by endpoint, never by an unknown path", async () => {
    const metrics = () => scrape(workerUrl);
    const live = { http_request_method: 'GET', http_route: '/health/live', http_response_status_code: '200' };
    const before = sample(await metrics(), 'http_server_request_duration_seconds_count', live) ?? 0;
    expect((await fetch(`${workerUrl}/health/live`)).status).toBe(200);
    const after = await metrics();
    expect(sample(after, 'http_server_request_duration_seconds_count', live)).toBe(before + 1);
    // The orchestrator's buckets (OTel's advice), so one query aggregates both apps.
    expect(sample(after, 'http_server_request_duration_seconds_bucket', { ...live, le: '7.5' })).toBe(
      before + 1,
    );
    expect(sample(after, 'http_server_request_duration_seconds_bucket', { ...live, le: '+Inf' })).toBe(
      before + 1,
    );

    const routesOf = (exposition: string) =>
      new Set(
        [...exposition.matchAll(/^http_server_request_duration_seconds_count\{.*http_route="([^"]*)"/gm)].map(
          (m) => m[1],
        ),
      );
    const unknownPath = `/nowhere/${okJob}`;
    expect((await fetch(`${workerUrl}${unknownPath}`)).status).toBe(404);
    const unmatched = { http_request_method: 'GET', http_route: '', http_response_status_code: '404' };
    const later = await metrics();
    expect(sample(later, 'http_server_request_duration_seconds_count', unmatched)).toBeGreaterThan(0);
    // Only the worker's endpoints and the empty route: the unknown path made no route of its own.
    const endpoints = ['', '/metrics', '/health/live', '/health/ready'];
    expect([...routesOf(later)].filter((route) => !endpoints.includes(route ?? ''))).toEqual([]);
    expect(later).not.toContain(okJob);
  });

  it('observes each finished job once by kind and final status, and counts live workers per server', async () => {
    const body = await scrape(orchestrator.url);
    for (const status of ['succeeded', 'completed_with_errors']) {
      expect(sample(body, 'switchyard_job_duration_seconds_count', { kind: 'batch', status }), status).toBe(
        1,
      );
      expect(sample(body, 'switchyard_jobs_ended_total', { kind: 'batch', status, team: 'alpha' })).toBe(1);
    }
    expect(sample(body, 'switchyard_live_workers', { server: 'search' })).toBe(1);
    expect(sample(body, 'switchyard_live_workers', { server: 'notes' })).toBe(1);
    // Stock Node runtime names, on both apps.
    for (const exposition of [body, await scrape(workerUrl)]) {
      expect(sample(exposition, 'process_cpu_seconds_total', {})).toBeGreaterThan(0);
      expect(sample(exposition, 'nodejs_heap_size_used_bytes', {})).toBeGreaterThan(0);
    }
  });

  it("reports the age of a server's longest-waiting call while one waits, and 0 once none does", async () => {
    const api = orchestrator.api('alpha');
    const age = async () =>
      sample(await scrape(orchestrator.url), 'switchyard_queue_oldest_waiting_call_age_seconds', {
        server: 'notes',
      });
    expect(await age()).toBe(0);
    // notes runs one call at a time (concurrency 1), so one of the two waits behind the other's delay.
    // Both are slow: a batch's calls are added at once and either may be taken first.
    const job = await api.submit({
      kind: 'batch',
      calls: [
        { tool: 'notes__add_note', arguments: { text: 'first', delayMs: 4_000 } },
        { tool: 'notes__add_note', arguments: { text: 'second', delayMs: 4_000 } },
      ],
    });
    expect(job.status).toBe(201);
    const seen: Array<number | undefined> = [];
    const reading = async () => {
      const value = await age();
      seen.push(value);
      return value;
    };
    await expect
      .poll(reading, { timeout: 15_000, interval: 100 })
      .toBeGreaterThan(0.5)
      .catch(async (error: Error) => {
        const view = await api.job(job.body.id);
        throw new Error(
          `the gauge never passed 0.5 s while a call waited (read ${seen.length} times, highest ${Math.max(...seen.map((value) => value ?? -1))}); the job then: ${JSON.stringify(view)}`,
          { cause: error },
        );
      });
    await api.finished(job.body.id);
    expect(await age()).toBe(0);
  });
});
