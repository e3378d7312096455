import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { ensureConsoleBuilt, launchChromium, SHOWN_MS, screenshotPath, signIn } from '../support/browser.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * What people do from the web console besides watching (issue 23): find a job by id or metadata, see
 * how long jobs took, cancel, delete and retry a job, submit one from the team's tools (a form per
 * call from the tool's input schema, an agent job from its form, or raw JSON, with the API's reason for
 * a refusal), and read each call's attempts and the approval audit trail on the job page, in real Chromium.
 */
describe('web console: search, actions, submit, attempts and audit', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let browser: Browser;
  let page: Page;
  // Metadata unique to this run, so the filters see only this suite's jobs.
  const run = `r${Date.now()}`;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    deployment = new Deployment('console-actions', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      slow: exampleServer('slow', { env: { SLOW_LEDGER: `${dir}/slow.jsonl` }, trusted: true }),
      // The same server with a short timeout and one retry: hang_once times out once, then answers.
      flaky: exampleServer('slow', {
        trusted: true,
        timeoutMs: 1_500,
        retry: { attempts: 2, backoffMs: 400 },
      }),
      teller: exampleServer('teller', {
        env: { TELLER_LEDGER: `${dir}/teller.jsonl` },
        trusted: true,
        approval: { default: 'never', tools: { close_account: 'auto' } },
      }),
    }));
    await deployment.startWorker({ id: 'w-actions' });
    orchestrator = await deployment.startOrchestrator('o-actions');
    alpha = orchestrator.api('alpha');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, orchestrator.url, TEAM_KEYS.alpha);
    await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
  });

  afterAll(async () => {
    await browser?.close();
    await deployment?.close();
  });

  const search = (query: string, metadata?: Record<string, string>) => ({
    kind: 'batch',
    calls: [{ tool: 'search__search', arguments: { query } }],
    ...(metadata ? { metadata } : {}),
  });

  const submitted = async (request: unknown): Promise<string> => {
    const answer = await alpha.submit(request);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.id;
  };

  const jobPage = (id: string, status?: string) =>
    page.locator(`[data-testid=job-page][data-job-id="${id}"]${status ? `[data-status=${status}]` : ''}`);

  const listedIds = () =>
    page.getByTestId('job-row').evaluateAll((rows) => rows.map((row) => row.dataset.jobId));

  it('opens a job by its id, says when there is no such job, and filters the list by metadata', async () => {
    const first = await submitted(search('tracing', { ticket: `${run}-1` }));
    const second = await submitted(search('queues', { ticket: `${run}-2`, owner: 'ops' }));
    const firstJob = await alpha.finished(first);
    await alpha.finished(second);

    await page.goto(`${orchestrator.url}/console/jobs`);
    const box = page.getByTestId('job-search');
    await box.locator('input[name=jobId]').fill(first);
    await box.locator('button[type=submit]').click();
    await jobPage(first).waitFor({ timeout: SHOWN_MS });
    expect(page.url()).toBe(`${orchestrator.url}/console/jobs/${first}`);

    await page.goto(`${orchestrator.url}/console/jobs`);
    const unknown = 'job_00000000-0000-4000-8000-000000000000';
    await box.locator('input[name=jobId]').fill(unknown);
    await box.locator('button[type=submit]').click();
    const missing = page.getByTestId('no-such-job');
    await missing.waitFor({ timeout: SHOWN_MS });
    expect(await missing.textContent()).toContain(`No such job: ${unknown}`);
    expect(page.url()).toBe(`${orchestrator.url}/console/jobs`);

    // key=value pairs, as the API takes them: the list holds only the jobs with all of them.
    const filters = page.getByTestId('job-filters');
    await filters.locator('input[name=metadata]').fill(`ticket=${run}-2 owner=ops`);
    await filters.locator('button[type=submit]').click();
    await page.waitForURL(/metadata%5Bticket%5D=/, { timeout: SHOWN_MS });
    await page.locator(`[data-testid=job-row][data-job-id="${second}"]`).waitFor({ timeout: SHOWN_MS });
    expect(await listedIds()).toEqual([second]);
    await page.screenshot({ path: screenshotPath('metadata-filter'), fullPage: true });

    // The filter lives in the URL: a deep link lists the same way, and shows the filter it applied.
    await page.goto(`${orchestrator.url}/console/jobs?metadata[ticket]=${run}-1`);
    await page.locator(`[data-testid=job-row][data-job-id="${first}"]`).waitFor({ timeout: SHOWN_MS });
    expect(await listedIds()).toEqual([first]);
    expect(await filters.locator('input[name=metadata]').inputValue()).toBe(`ticket=${run}-1`);
    // Its duration: started → finished, as the API's times say (a short job: in ms or s).
    const took = Date.parse(firstJob.finishedAt) - Date.parse(firstJob.startedAt);
    const duration = await page.getByTestId('job-duration').textContent();
    expect(duration).toBe(took < 1_000 ? `${took} ms` : `${(took / 1_000).toFixed(2)} s`);

    await filters.locator('input[name=metadata]').fill('ticket');
    await filters.locator('button[type=submit]').click();
    expect(await page.getByTestId('metadata-error').textContent()).toBe(
      'metadata: "ticket" is not key=value',
    );
  });

  it('cancels a running job from its page, then deletes it after a confirmation', async () => {
    const id = await submitted({
      kind: 'batch',
      calls: [{ tool: 'slow__sleep', arguments: { ms: 600_000, progressEveryMs: 1_000 } }],
    });
    await alpha.events(id, (event) => event.event === 'status' && event.data.status === 'running');
    await page.goto(`${orchestrator.url}/console/jobs/${id}`);
    await jobPage(id, 'running').waitFor({ timeout: SHOWN_MS });
    expect(await page.getByTestId('job-duration').textContent()).toMatch(/^running for /);
    // A running job cannot be deleted (the API says 409): the page offers only Cancel and Retry.
    expect(await page.getByTestId('delete-job').count()).toBe(0);
    await page.getByTestId('cancel-job').click();
    await jobPage(id, 'cancelled').waitFor({ timeout: SHOWN_MS });
    expect((await alpha.job(id)).status).toBe('cancelled');
    expect(await page.getByTestId('cancel-job').count()).toBe(0);

    await page.getByTestId('delete-job').click();
    const confirm = page.getByTestId('confirm-delete');
    await confirm.waitFor({ timeout: SHOWN_MS });
    await page.screenshot({ path: screenshotPath('delete-confirm'), fullPage: true });
    // Asking is not deleting.
    expect((await alpha.request('GET', `/v1/jobs/${id}`)).status).toBe(200);
    await page.getByTestId('confirm-delete-yes').click();
    const notice = page.getByTestId('deleted-notice');
    await notice.waitFor({ timeout: SHOWN_MS });
    expect(await notice.textContent()).toContain(id);
    expect((await alpha.request('GET', `/v1/jobs/${id}`)).status).toBe(404);
  });

  it('retries a job as a new job with the same request and opens it', async () => {
    const id = await submitted(search('tracing', { ticket: `${run}-retry` }));
    const original = await alpha.finished(id);
    await page.goto(`${orchestrator.url}/console/jobs/${id}`);
    await jobPage(id, 'succeeded').waitFor({ timeout: SHOWN_MS });
    await page.getByTestId('retry-job').click();
    await page.waitForURL((url) => /\/console\/jobs\/job_/.test(url.pathname) && !url.pathname.endsWith(id), {
      timeout: SHOWN_MS,
    });
    const retryId = page.url().split('/').at(-1) as string;
    await jobPage(retryId).waitFor({ timeout: SHOWN_MS });
    const retried = await alpha.finished(retryId);
    expect(retried.request).toEqual(original.request);
    expect(retried.metadata).toEqual({ ticket: `${run}-retry` });
    expect(retried.status).toBe('succeeded');
    // The first job stays as it was.
    expect((await alpha.job(id)).status).toBe('succeeded');
  });

  it("submits a batch from the tool's input-schema form, and shows the API's reason for a bad request", async () => {
    await page.goto(`${orchestrator.url}/console/submit`);
    const picker = page.getByTestId('tool-picker');
    await picker.locator('option[value=search__search]').waitFor({ state: 'attached', timeout: SHOWN_MS });
    await picker.selectOption('search__search');
    await page.getByTestId('add-call').click();
    const call = page.locator('[data-testid=draft-call][data-tool=search__search]');
    // One field per property of the tool's input schema: query (text), limit (a number, its default 5).
    await call.locator('input[type=text][name=query]').fill('tracing');
    expect(await call.locator('input[type=number][name=limit]').inputValue()).toBe('5');
    await call.locator('input[type=number][name=limit]').fill('2');
    await page.getByTestId('submit-form').locator('input[name=metadata]').fill(`origin=${run}-console`);
    await page.screenshot({ path: screenshotPath('submit'), fullPage: true });
    await page.getByTestId('submit-job').click();
    await page.waitForURL(/\/console\/jobs\/job_/, { timeout: SHOWN_MS });
    const id = page.url().split('/').at(-1) as string;
    await jobPage(id).waitFor({ timeout: SHOWN_MS });
    const job = await alpha.finished(id);
    expect(job.request).toMatchObject({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'tracing', limit: 2 } }],
      metadata: { origin: `${run}-console` },
    });
    expect(job.status).toBe('succeeded');

    // The raw editor: the API's 400 and its words, and the page stays on the form.
    await page.goto(`${orchestrator.url}/console/submit`);
    await page.getByTestId('mode-json').click();
    const editor = page.getByTestId('request-json');
    await editor.fill(JSON.stringify(search('tracing')).replace('search__search', 'search_search'));
    await page.getByTestId('submit-job').click();
    const error = page.getByTestId('error');
    await error.waitFor({ timeout: SHOWN_MS });
    expect(await error.textContent()).toMatch(/^400 .*search_search.*search__search/);
    expect(page.url()).toBe(`${orchestrator.url}/console/submit`);
    await page.screenshot({ path: screenshotPath('submit-refused'), fullPage: true });
    await editor.fill('{"kind": "batch",');
    await page.getByTestId('submit-job').click();
    await page.getByText('the request is not JSON').waitFor({ timeout: SHOWN_MS });
  });

  it("submits an agent job from its form: checked before sending, the models the team may use, the API's 4xx as it said it", async () => {
    await page.goto(`${orchestrator.url}/console/submit`);
    await page.getByTestId('mode-agent').click();
    const form = page.getByTestId('submit-form');
    // Checked before it is sent: nothing was typed yet.
    await page.getByTestId('submit-job').click();
    const error = page.getByTestId('error');
    await error.waitFor({ timeout: SHOWN_MS });
    expect(await error.textContent()).toBe('prompt: write what the agent should do');
    expect(page.url()).toBe(`${orchestrator.url}/console/submit`);

    // The providers offered are what GET /v1/models lets this team use, after the team's default.
    const provider = page.getByTestId('model-provider');
    await provider.locator('option[value=scripted]').waitFor({ state: 'attached', timeout: SHOWN_MS });
    const offered = await provider
      .locator('option')
      .evaluateAll((options) => options.map((option) => option.getAttribute('value') ?? ''));
    const choices = await alpha.client.listModels();
    expect(offered).toEqual(['', ...choices.providers.map((entry) => entry.provider)]);

    await form.locator('textarea[name=prompt]').fill('Search the docs for tracing, then answer.');
    await provider.selectOption('scripted');
    const script = [
      { toolCalls: [{ tool: 'search__search', arguments: { query: 'tracing' } }] },
      { final: 'Tracing is documented.' },
    ];
    await form.locator('textarea[name=script]').fill(JSON.stringify(script));
    await page.getByTestId('agent-tools').locator('input[value=search__search]').check();
    await form.locator('input[name=max-steps]').fill('4');
    await form.locator('input[name=metadata]').fill(`origin=${run}-agent`);
    // The refusal went with the change that answered it.
    expect(await page.getByTestId('error').count()).toBe(0);
    await page.screenshot({ path: screenshotPath('submit-agent'), fullPage: true });
    await page.getByTestId('submit-job').click();
    await page.waitForURL(/\/console\/jobs\/job_/, { timeout: SHOWN_MS });
    const id = page.url().split('/').at(-1) as string;
    await jobPage(id).waitFor({ timeout: SHOWN_MS });
    const job = await alpha.finished(id);
    expect(job.request).toEqual({
      kind: 'agent',
      input: 'Search the docs for tracing, then answer.',
      model: { provider: 'scripted', script },
      tools: { allow: ['search__search'] },
      limits: { maxSteps: 4 },
      metadata: { origin: `${run}-agent` },
    });
    expect(job.status).toBe('succeeded');
    expect(job.result).toBe('Tracing is documented.');
    expect(job.toolCalls.map((call: Json) => [call.tool, call.state])).toEqual([['search__search', 'ok']]);
    await jobPage(id, 'succeeded').waitFor({ timeout: SHOWN_MS });

    // A script the API refuses: its 400 and its words, and the page stays on the form.
    await page.goto(`${orchestrator.url}/console/submit`);
    await page.getByTestId('mode-agent').click();
    await form.locator('textarea[name=prompt]').fill('Answer.');
    await provider.locator('option[value=scripted]').waitFor({ state: 'attached', timeout: SHOWN_MS });
    await provider.selectOption('scripted');
    await form.locator('textarea[name=script]').fill('[{"answer": "no such turn"}]');
    await page.getByTestId('submit-job').click();
    await error.waitFor({ timeout: SHOWN_MS });
    expect(await error.textContent()).toMatch(/^400 .*model\.script\.0/);
    expect(page.url()).toBe(`${orchestrator.url}/console/submit`);
    await page.screenshot({ path: screenshotPath('submit-agent-refused'), fullPage: true });
  });

  it('shows each attempt of a retried call and the approval audit trail on the job page', async () => {
    const id = await submitted({
      kind: 'agent',
      input: 'Close the account once the lookup answers.',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'lookup', tool: 'flaky__hang_once', arguments: { key: `${run}-lookup` } }] },
          { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'A-9' } }] },
          { final: 'Closed.' },
        ],
      },
    });
    await alpha.events(id, (event) => event.event === 'input_required' && event.data.kind === 'approval');
    const parked: Json = await alpha.job(id);
    const digest = parked.pendingInputs.find((input: Json) => input.toolCallId === 'close').digest;
    const decided = await alpha.request('POST', `/v1/jobs/${id}/approvals/close`, {
      decision: 'approve',
      digest,
      reason: 'ticket FIN-9',
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const job = await alpha.finished(id);
    expect(job.status).toBe('succeeded');

    await page.goto(`${orchestrator.url}/console/jobs/${id}`);
    await jobPage(id, 'succeeded').waitFor({ timeout: SHOWN_MS });
    const lookup = job.toolCalls.find((entry: Json) => entry.id === 'lookup');
    expect(lookup.attempts).toHaveLength(2);
    const rows = page.locator('[data-testid=attempt-row][data-call-id=lookup]');
    expect(await rows.count()).toBe(2);
    // The timed-out first attempt with its error, then the retry that answered: worker and error each.
    expect(await rows.nth(0).getByTestId('attempt-worker').textContent()).toBe(lookup.attempts[0].workerId);
    expect(await rows.nth(0).getByTestId('attempt-error').textContent()).toBe(lookup.attempts[0].error);
    expect(lookup.attempts[0].error).toBeTruthy();
    expect(await rows.nth(1).getByTestId('attempt-error').textContent()).toBe('');
    expect(await rows.nth(1).getByTestId('attempt-worker').textContent()).toBe('w-actions');

    expect(job.audit).toHaveLength(1);
    const audit = page.locator('[data-testid=audit-row][data-call-id=close][data-kind=approval]');
    expect(await audit.getByTestId('audit-decision').textContent()).toBe('approved: ticket FIN-9');
    expect(await audit.getByTestId('audit-by').textContent()).toBe(job.audit[0].decidedBy);
    expect(job.audit[0].decidedBy).toContain('alpha/apiKeys[0]');
    expect(await audit.getByTestId('audit-at').textContent()).toBe(
      await page.evaluate((at) => new Date(at).toLocaleString(), job.audit[0].decidedAt as string),
    );
    await page.screenshot({ path: screenshotPath('attempts-audit'), fullPage: true });
  });

  it('shows an operator no actions and no submit page: read-only', async () => {
    const id = await submitted(search('tracing'));
    await alpha.finished(id);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const operator = await context.newPage();
      await signIn(operator, orchestrator.url, TEAM_KEYS.operator, `/console/jobs/${id}`);
      await operator.locator(`[data-testid=job-page][data-job-id="${id}"]`).waitFor({ timeout: SHOWN_MS });
      expect(await operator.getByTestId('job-actions').count()).toBe(0);
      expect(await operator.locator('nav a[href="/console/submit"]').count()).toBe(0);
      // The signed-in team key has them, on the same job.
      await page.goto(`${orchestrator.url}/console/jobs/${id}`);
      await page.getByTestId('job-actions').waitFor({ timeout: SHOWN_MS });
      expect(await page.locator('nav a[href="/console/submit"]').count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
