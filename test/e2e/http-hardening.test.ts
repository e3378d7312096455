import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { ensureConsoleBuilt, launchChromium, SHOWN_MS, signIn } from '../support/browser.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { freePort } from '../support/ports.ts';

const METRICS_TOKEN = 'metrics-token-000000000001';
const DASHBOARD = { username: 'ops', password: 'correct horse battery' };

/** The headers every answer must carry, whatever its path or status. */
function expectSecurityHeaders(headers: Headers, what: string): void {
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
}

/** The Content-Security-Policy of `headers` as directive → sources. */
function policy(headers: Headers): Record<string, string[]> {
  return Object.fromEntries(
    (headers.get('content-security-policy') ?? '')
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name, sources]),
  );
}

/**
 * Security headers (helmet) on the API, /mcp, the console, /docs and the queue dashboard, with each
 * page's CSP one it loads under in real Chromium; and /metrics behind `orchestrator.metrics.bearerToken`
 * (given as `${VAR}`, which the worker, never reading it, starts without).
 */
describe('HTTP hardening', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    // The test process validates the config too, so it sees the variable while it does; the worker
    // is then started without it, the orchestrator with it.
    process.env.SWITCHYARD_METRICS_TOKEN = METRICS_TOKEN;
    try {
      deployment = new Deployment(
        'hardening',
        () => ({ search: exampleServer('search', { trusted: true }) }),
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a config placeholder the orchestrator expands
        { orchestrator: { metrics: { bearerToken: '${SWITCHYARD_METRICS_TOKEN}' } } },
      );
    } finally {
      delete process.env.SWITCHYARD_METRICS_TOKEN;
    }
    await deployment.startWorker();
    Object.assign(deployment.processEnv, {
      SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN,
      DASHBOARD_USERNAME: DASHBOARD.username,
      DASHBOARD_PASSWORD: DASHBOARD.password,
    });
    orchestrator = await deployment.startOrchestrator();
    browser = await launchChromium();
    context = await browser.newContext({ httpCredentials: DASHBOARD });
  });

  afterAll(async () => {
    await browser?.close();
    await deployment?.close();
  });

  it('sends them on /v1 JSON, problem+json errors, /mcp, /health and /openapi.json', async () => {
    const key = { authorization: `Bearer ${TEAM_KEYS.alpha}` };
    const answers = {
      'GET /v1/tools': await fetch(`${orchestrator.url}/v1/tools`, { headers: key }),
      'GET /v1/jobs/x without a key': await fetch(`${orchestrator.url}/v1/jobs/x`),
      'POST /v1/jobs malformed': await fetch(`${orchestrator.url}/v1/jobs`, {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json' },
        body: '{',
      }),
      'POST /mcp without a key': await fetch(`${orchestrator.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      }),
      'GET /health/live': await fetch(`${orchestrator.url}/health/live`),
      'GET /openapi.json': await fetch(`${orchestrator.url}/openapi.json`),
    };
    expect(Object.values(answers).map((answer) => answer.status)).toEqual([200, 401, 400, 401, 200, 200]);
    for (const [what, answer] of Object.entries(answers)) {
      expectSecurityHeaders(answer.headers, what);
      // JSON never renders: its policy allows nothing at all.
      expect(policy(answer.headers)['default-src'], what).toEqual(["'none'"]);
      await answer.body?.cancel();
    }
  });

  /** Opens `path`, runs `ready` and returns every CSP violation the page reported on the way. */
  async function violationsOf(path: string, ready: (page: Page) => Promise<void>): Promise<string[]> {
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    try {
      const response = await page.goto(`${orchestrator.url}${path}`);
      expect(response?.status(), path).toBe(200);
      expectSecurityHeaders(new Headers(await response?.allHeaders()), path);
      await ready(page);
      return refused;
    } finally {
      await page.close();
    }
  }

  it('gives the console a strict CSP that its page runs under, sign-in and job list included', async () => {
    const answer = await fetch(`${orchestrator.url}/console/`);
    await answer.body?.cancel();
    const directives = policy(answer.headers);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['style-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    const refused = await violationsOf('/console/', async (page) => {
      await signIn(page, orchestrator.url, TEAM_KEYS.alpha);
      await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
      // Styled by its stylesheet (not refused): the layout's CSS applied.
      expect(await page.evaluate('getComputedStyle(document.body).margin')).toBe('0px');
      // A job page: the timeline's bars are sized by style props, and the page streams events (SSE).
      const api = orchestrator.api('alpha');
      const job = await api.submit({
        kind: 'batch',
        calls: [{ tool: 'search__search', arguments: { query: 'csp' } }],
      });
      await api.finished(job.body.id);
      await page.goto(`${orchestrator.url}/console/jobs/${job.body.id}`);
      await page.getByTestId('timeline-bar').first().waitFor({ timeout: SHOWN_MS });
    });
    expect(refused).toEqual([]);
  });

  it('gives /docs (Scalar) and the queue dashboard policies their pages load under', async () => {
    const docs = await fetch(`${orchestrator.url}/docs`);
    await docs.body?.cancel();
    expect(policy(docs.headers)['script-src']).toContain('https://cdn.jsdelivr.net');
    // Their inline script and style are allowed (the CDN itself may be out of reach here).
    expect(await violationsOf('/docs', (page) => page.waitForLoadState('load'))).toEqual([]);
    expect(
      await violationsOf('/admin/queues', (page) =>
        // Rendered by its scripts (the placeholder before them has no header).
        page.locator('#root header').waitFor({ timeout: SHOWN_MS }),
      ),
    ).toEqual([]);
  });

  it('answers /metrics 401 without the bearer token, 200 with it', async () => {
    const scrape = (headers: Record<string, string> = {}) =>
      fetch(`${orchestrator.url}/metrics`, { headers });
    for (const headers of [{}, { authorization: 'Bearer not-the-metrics-token' }] as Record<
      string,
      string
    >[]) {
      const refused = await scrape(headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem: Json = await refused.json();
      expect(problem).toMatchObject({ type: 'urn:switchyard:problem:unauthorized', status: 401 });
    }
    // A team's key is not the metrics token.
    expect((await scrape({ authorization: `Bearer ${TEAM_KEYS.alpha}` })).status).toBe(401);
    const scraped = await scrape({ authorization: `Bearer ${METRICS_TOKEN}` });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^switchyard_queue_jobs\{/m);
  });
});

/** `orchestrator.metrics.port`: /metrics on its own port (with the token too), no longer on the API's. */
describe('/metrics on its own port', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    deployment = new Deployment(
      'metrics-port',
      () => ({ search: exampleServer('search', { trusted: true }) }),
      {
        orchestrator: { metrics: { port, bearerToken: METRICS_TOKEN } },
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator();
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('serves /metrics there and answers 404 for it on the API port', async () => {
    const auth = { authorization: `Bearer ${METRICS_TOKEN}` };
    const onApi = await fetch(`${orchestrator.url}/metrics`, { headers: auth });
    expect(onApi.status).toBe(404);
    expect(((await onApi.json()) as Json).detail).toMatch(/orchestrator\.metrics\.port/);
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${metricsUrl}/metrics`, { headers: auth });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^switchyard_queue_jobs\{/m);
    const elsewhere = await fetch(`${metricsUrl}/v1/tools`, { headers: auth });
    expect(elsewhere.status).toBe(404);
    await elsewhere.body?.cancel();
  });
});
