import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { ensureConsoleBuilt, launchChromium, SHOWN_MS, screenshotPath, signIn } from '../support/browser.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * The web console in real headless Chromium against a real deployment (orchestrator serving the Vite
 * build, a worker, MCP servers over stdio, Redis, PostgreSQL): the key prompt, the job page's timeline
 * (lanes per server, a bar per call, coloured by outcome, worker on hover), bars appearing live over
 * SSE while a job runs, the job list's filters, and the tools and servers pages.
 */
describe('web console', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const screenshot = (name: string) => page.screenshot({ path: screenshotPath(name), fullPage: true });

  const bars = () => page.getByTestId('timeline-bar');

  // Functions given to evaluateAll run in the browser, on its elements (the suite has no DOM types).
  /** The timeline as the page shows it: lane per server, and each bar's call, status and worker. */
  const shownTimeline = (): Promise<
    { server: string; bars: { id: string; status: string; worker: string; segments: number }[] }[]
  > =>
    page.getByTestId('timeline-lane').evaluateAll((lanes) =>
      lanes.map((lane) => ({
        server: lane.dataset.server,
        bars: [...lane.querySelectorAll('[data-testid=timeline-bar]')].map((bar) => ({
          id: bar.dataset.callId,
          status: bar.dataset.status,
          worker: bar.dataset.worker,
          segments: bar.querySelectorAll('.segment').length,
        })),
      })),
    );

  const barStatuses = (): Promise<string[]> =>
    bars().evaluateAll((elements) => elements.map((bar) => bar.dataset.status));

  /** The timeline the API's job view implies. */
  const expectedTimeline = (job: Json) => {
    const lanes = new Map<string, { id: string; status: string; worker: string; segments: number }[]>();
    for (const call of [...job.toolCalls].sort(
      (a: Json, b: Json) => Date.parse(a.dispatchedAt) - Date.parse(b.dispatchedAt),
    )) {
      const bar = {
        id: call.id,
        status: call.outcome?.status ?? call.status,
        worker: call.workerId ?? '',
        segments: call.startedAt ? 2 : 1,
      };
      lanes.set(call.server, [...(lanes.get(call.server) ?? []), bar]);
    }
    return [...lanes].map(([server, bars]) => ({ server, bars }));
  };

  beforeAll(async () => {
    await ensureConsoleBuilt();
    deployment = new Deployment('console', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, trusted: true }),
    }));
    // The job page links each job's trace in the deployment's Jaeger UI (never visited here).
    deployment.processEnv.JAEGER_UI_URL = 'http://127.0.0.1:16686';
    await deployment.startWorker({ id: 'w-console' });
    orchestrator = await deployment.startOrchestrator('o-console');
    alpha = orchestrator.api('alpha');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, orchestrator.url, TEAM_KEYS.alpha);
    await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
  });

  afterAll(async () => {
    await browser?.close();
    await deployment?.close();
  });

  it('is served at /console with SPA fallback, cache headers, and a 404 for a missing asset', async () => {
    const index = await fetch(`${orchestrator.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = html.match(/\/console\/assets\/[\w.-]+\.js/)?.[0];
    expect(asset, html).toBeDefined();

    // Without the trailing slash: the page too (or a redirect to it).
    const bare = await fetch(`${orchestrator.url}/console`);
    expect(bare.status).toBe(200);
    expect(await bare.text()).toBe(html);

    // A deep link is the same page: the browser's router resolves it.
    const deep = await fetch(`${orchestrator.url}/console/jobs/job_00000000-0000-0000-0000-000000000000`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);

    const script = await fetch(`${orchestrator.url}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

    const missing = await fetch(`${orchestrator.url}/console/assets/no-such-file.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).not.toMatch(/text\/html/);

    // The API stays the API: a /v1 route without a key is still a 401 problem, not the page.
    const unauthenticated = await fetch(`${orchestrator.url}/v1/jobs`);
    expect(unauthenticated.status).toBe(401);
  });

  it("shows a batch's calls as one lane per server and a bar per call, coloured by outcome, worker on hover", async () => {
    const submitted = await alpha.submit({
      kind: 'batch',
      metadata: { ticket: 'CON-1' },
      calls: [
        { tool: 'search__search', arguments: { query: 'switchyard' } },
        { tool: 'notes__delete_note', arguments: { id: 'no-such-note' } },
        { tool: 'search__search', arguments: { query: 'bullmq' } },
      ],
    });
    expect(submitted.status).toBe(201);
    const job: Json = await alpha.finished(submitted.body.id);
    expect(job.status).toBe('completed_with_errors');

    await page.goto(`${orchestrator.url}/console/jobs/${job.id}`);
    await page
      .locator(`[data-testid=job-page][data-status=completed_with_errors]`)
      .waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => bars().count(), { timeout: SHOWN_MS }).toBe(3);
    expect(await shownTimeline()).toEqual(expectedTimeline(job));
    // The batch's calls are dispatched together: the lanes' order is that of their first dispatch.
    expect((await shownTimeline()).map((lane) => lane.server).sort()).toEqual(['notes', 'search']);
    // Outcome colours: each status has its own colour, the same one on every bar of that status.
    const colours: { status: string; colour: string }[] = await bars().evaluateAll((elements) =>
      elements.map((bar) => ({
        status: bar.dataset.status,
        // A bar is its segments: the attempt that ended the call wears the outcome's colour.
        colour: bar.ownerDocument.defaultView.getComputedStyle(
          [...bar.querySelectorAll('[data-testid=bar-attempt]')].at(-1) ?? bar,
        ).backgroundColor,
      })),
    );
    const ok = colours.filter((bar) => bar.status === 'ok').map((bar) => bar.colour);
    const toolError = colours.find((bar) => bar.status === 'tool_error')?.colour;
    expect(new Set(ok).size).toBe(1);
    expect(toolError).toBeDefined();
    expect(ok[0]).not.toBe(toolError);
    await expect.poll(() => page.getByTestId('batch-summary').textContent()).toMatch(/3 \(0 pending\)/);
    expect(job.traceUrl).toBe(`http://127.0.0.1:16686/trace/${job.traceId}`);
    expect(await page.getByTestId('trace-link').getAttribute('href')).toBe(job.traceUrl);

    const failedCall = job.toolCalls.find((call: Json) => call.outcome.status === 'tool_error');
    await page.locator(`[data-testid=timeline-bar][data-call-id="${failedCall.id}"]`).hover();
    const details = page.getByTestId('bar-details');
    await details.waitFor({ timeout: SHOWN_MS });
    expect(await details.getByTestId('bar-details-worker').textContent()).toBe('w-console');
    expect(await details.textContent()).toContain(failedCall.outcome.text.slice(0, 40));
    await screenshot('batch-job');
  });

  it("shows an agent job's timeline, messages in the API's roles, and its answer", async () => {
    const submitted = await alpha.submit({
      kind: 'agent',
      input: 'find switchyard, then note it',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'look', tool: 'search__search', arguments: { query: 'switchyard' } }] },
          { toolCalls: [{ id: 'nap', tool: 'slow__sleep', arguments: { ms: 50 } }] },
          { final: 'Switchyard runs MCP tool calls on a fleet.' },
        ],
      },
    });
    expect(submitted.status).toBe(201);
    const job: Json = await alpha.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');

    await page.goto(`${orchestrator.url}/console/jobs/${job.id}`);
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: SHOWN_MS });
    await expect.poll(() => bars().count(), { timeout: SHOWN_MS }).toBe(job.toolCalls.length);
    expect(await shownTimeline()).toEqual(expectedTimeline(job));
    const roles = await page
      .locator('[data-testid=messages] > li')
      .evaluateAll((items) => items.map((item) => item.dataset.role));
    expect(roles).toEqual(job.messages.map((message: Json) => message.role));
    expect(await page.getByTestId('job-result').textContent()).toContain(
      'Switchyard runs MCP tool calls on a fleet.',
    );
    await screenshot('agent-job');
  });

  it("draws a running job's bars live over SSE, without reloading", async () => {
    const submitted = await alpha.submit({
      kind: 'batch',
      calls: [1, 2, 3].map(() => ({ tool: 'slow__sleep', arguments: { ms: 1_500 } })),
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.id;
    await page.goto(`${orchestrator.url}/console/jobs/${id}`);
    await page.getByTestId('job-page').waitFor({ timeout: SHOWN_MS });
    // `slow` serves one call at a time: while the first runs, the others are still dispatched.
    await page.getByTestId('live').waitFor({ timeout: SHOWN_MS });
    await page
      .locator('[data-testid=timeline-bar][data-status=dispatched]')
      .first()
      .waitFor({ timeout: SHOWN_MS });
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    // A moment with some calls finished and others not: the page follows the job as it runs.
    await expect
      .poll(
        async () => {
          const statuses = await barStatuses();
          return statuses.includes('ok') && statuses.includes('dispatched');
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    await screenshot('running-job');
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.locator('[data-testid=timeline-bar][data-status=ok]').count(), { timeout: SHOWN_MS })
      .toBe(3);
    expect(navigations).toEqual([]);
    const job: Json = await alpha.job(id);
    expect(await shownTimeline()).toEqual(expectedTimeline(job));
    // Queue waits show: the calls after the first waited for the server's one slot.
    const waits = job.toolCalls.map(
      (call: Json) => Date.parse(call.startedAt) - Date.parse(call.dispatchedAt),
    );
    expect(Math.max(...waits)).toBeGreaterThan(0);
  });

  it("fills a long call's bar as its server reports progress, with the server's message, until its outcome", async () => {
    const submitted = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: 'slow__sleep', arguments: { ms: 4_000, progressEveryMs: 100 } }],
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.id;
    await page.goto(`${orchestrator.url}/console/jobs/${id}`);
    const fill = page.getByTestId('bar-progress');
    const label = page.getByTestId('bar-progress-label');
    // The fill's share of its bar, as drawn (the bar itself grows with the time the call runs).
    const drawnShare = () =>
      fill.evaluate((element) => {
        const bar = element.parentElement as typeof element;
        return element.getBoundingClientRect().width / bar.getBoundingClientRect().width;
      });
    await fill.waitFor({ timeout: SHOWN_MS });
    const first = await drawnShare();
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1);
    await expect.poll(drawnShare, { timeout: SHOWN_MS }).toBeGreaterThan(first + 0.1);
    expect(await label.textContent()).toMatch(/^\d+% slept \d+ of 4000 ms$/);
    const shown = Number(/^(\d+)%/.exec((await label.textContent()) ?? '')?.[1]);
    expect(shown).toBeGreaterThan(Math.floor(first * 100));
    await screenshot('call-progress');
    // The outcome ends the bar: the fill and its message go, the bar takes the outcome's colour.
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=timeline-bar][data-status=ok]').waitFor({ timeout: SHOWN_MS });
    expect(await fill.count()).toBe(0);
    expect(await label.count()).toBe(0);
  });

  it("adds an agent job's bars live as its steps dispatch calls", async () => {
    const submitted = await alpha.submit({
      kind: 'agent',
      input: 'nap twice',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'first', tool: 'slow__sleep', arguments: { ms: 2_500 } }] },
          { toolCalls: [{ id: 'second', tool: 'slow__sleep', arguments: { ms: 2_500 } }] },
          { final: 'Rested.' },
        ],
      },
    });
    expect(submitted.status).toBe(201);
    await page.goto(`${orchestrator.url}/console/jobs/${submitted.body.id}`);
    await page.getByTestId('job-page').waitFor({ timeout: SHOWN_MS });
    const shown = async () =>
      (await shownTimeline()).flatMap((lane) => lane.bars.map((bar) => `${bar.id}:${bar.status}`));
    // The second call does not exist until the model's second step: its bar appears on the open page.
    // Each state lasts a 2.5 s sleep, long enough to be seen on a loaded machine.
    await expect.poll(shown, { timeout: 60_000 }).toEqual(['first:dispatched']);
    await expect.poll(shown, { timeout: 60_000 }).toEqual(['first:ok', 'second:dispatched']);
    await expect.poll(shown, { timeout: 60_000 }).toEqual(['first:ok', 'second:ok']);
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: SHOWN_MS });
  });

  it('filters the job list by status, kind and creation time', async () => {
    const listed = async () => {
      await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
      return page.locator('[data-testid=job-row]').evaluateAll((rows) =>
        rows.map((row) => ({
          id: row.dataset.jobId,
          status: row.dataset.status,
        })),
      );
    };
    const ids = async (query: string) =>
      ((await alpha.request('GET', `/v1/jobs?${query}`)).body.jobs as Json[]).map((job) => job.id);

    await page.goto(`${orchestrator.url}/console/`);
    const all = await ids('limit=50');
    expect(all.length).toBeGreaterThanOrEqual(4);
    await expect.poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS }).toEqual(all);

    // Cursor paging: the page follows the API's nextCursor, and goes back with the browser's history.
    await page.goto(`${orchestrator.url}/console/?limit=2`);
    await expect
      .poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS })
      .toEqual(all.slice(0, 2));
    await page.getByTestId('next-page').click();
    await expect
      .poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS })
      .toEqual(all.slice(2, 4));
    expect(new URL(page.url()).searchParams.get('cursor')).toBeTruthy();
    await page.getByTestId('previous-page').click();
    await expect
      .poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS })
      .toEqual(all.slice(0, 2));
    await page.goto(`${orchestrator.url}/console/`);

    const filters = page.getByTestId('job-filters');
    await filters.locator('input[name=status][value=completed_with_errors]').check();
    await filters.locator('button[type=submit]').click();
    const withErrors = await ids('status=completed_with_errors');
    expect(withErrors.length).toBeGreaterThanOrEqual(1);
    await expect
      .poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS })
      .toEqual(withErrors);
    expect(new URL(page.url()).searchParams.get('status')).toBe('completed_with_errors');

    await filters.locator('input[name=status][value=completed_with_errors]').uncheck();
    await filters.locator('select[name=kind]').selectOption('agent');
    await filters.locator('button[type=submit]').click();
    const agents = await ids('kind=agent');
    expect(agents.length).toBeGreaterThanOrEqual(1);
    await expect
      .poll(async () => (await listed()).map((row) => row.id), { timeout: SHOWN_MS })
      .toEqual(agents);

    // Created after a moment in the future: nothing.
    await filters.locator('input[name=createdAfter]').fill('2999-01-01T00:00');
    await filters.locator('button[type=submit]').click();
    await expect.poll(async () => (await listed()).length, { timeout: SHOWN_MS }).toBe(0);
    await page.getByText('No jobs match.').waitFor({ timeout: SHOWN_MS });
    await screenshot('job-list');
  });

  it("shows the team's tools, and an operator the servers' sessions, revisions and queues", async () => {
    await page.goto(`${orchestrator.url}/console/tools`);
    await page.locator('[data-testid=tool-row][data-tool=search__search]').waitFor({ timeout: SHOWN_MS });
    const tools: Json = (await alpha.request('GET', '/v1/tools')).body;
    expect(await page.getByTestId('tool-row').count()).toBe(tools.tools.length);

    // Another tab with the operator key: the fleet as operators see it.
    const operator = await context.newPage();
    try {
      await signIn(operator, orchestrator.url, TEAM_KEYS.operator, '/console/servers');
      const servers: Json = (await orchestrator.api('operator').request('GET', '/v1/servers')).body;
      await operator
        .locator('[data-testid=session][data-worker=w-console]')
        .first()
        .waitFor({ timeout: SHOWN_MS });
      expect(await operator.getByTestId('server').count()).toBe(servers.servers.length);
      expect(await operator.getByTestId('queue-depth').count()).toBe(servers.servers.length);
      await operator.screenshot({ path: screenshotPath('servers'), fullPage: true });
    } finally {
      await operator.close();
    }
  });
});
