import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { ensureConsoleBuilt, launchChromium, SHOWN_MS, screenshotPath, signIn } from '../support/browser.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * The console's ways in (issue 23), in real Chromium: a wrong key is refused on the key form with the
 * API's reason and the right one then opens the job list (no request without the key, no 401, no
 * bounce back); an operator key lands on every team's jobs with a team column and filter, read-only; a
 * team key sees its own; /console/jobs?status=… opens the list so filtered.
 */
describe('web console: keys, operators and teams', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let beta: ApiClient;
  let browser: Browser;
  let alphaBatch: Json;
  let alphaParked: Json;
  let betaBatch: Json;

  const search = (query: string) => ({
    kind: 'batch',
    calls: [{ tool: 'search__search', arguments: { query } }],
  });

  /** A fresh tab of its own (sessionStorage is per tab): each test signs in as somebody else. */
  const withPage = async (name: string, use: (page: Page) => Promise<void>) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await use(page);
      await page.screenshot({ path: screenshotPath(name), fullPage: true });
    } finally {
      await context.close();
    }
  };

  /** The rows of the job list as shown: id and team. */
  const listed = (page: Page): Promise<{ id: string; team: string }[]> =>
    page
      .locator('[data-testid=job-row]')
      .evaluateAll((rows) => rows.map((row) => ({ id: row.dataset.jobId, team: row.dataset.team })));

  beforeAll(async () => {
    await ensureConsoleBuilt();
    deployment = new Deployment('console-keys', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      teller: exampleServer('teller', {
        env: { TELLER_LEDGER: `${dir}/teller.jsonl` },
        trusted: true,
        approval: { default: 'never', tools: { close_account: 'auto' } },
      }),
    }));
    await deployment.startWorker({ id: 'w-keys' });
    orchestrator = await deployment.startOrchestrator('o-keys');
    alpha = orchestrator.api('alpha');
    beta = orchestrator.api('beta');
    alphaBatch = await alpha.finished((await alpha.submit(search('alpha'))).body.id);
    betaBatch = await beta.finished((await beta.submit(search('beta'))).body.id);
    // An agent job parked on an approval: the page an operator may read but must not answer.
    const parked = await alpha.submit({
      kind: 'agent',
      input: 'Close it.',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'K-1' } }] },
          { final: 'Closed.' },
        ],
      },
    });
    expect(parked.status).toBe(201);
    // Awaited on its event stream: the status event that parks it.
    await alpha.events(
      parked.body.id,
      (event) => event.event === 'status' && event.data.status === 'input_required',
    );
    alphaParked = await alpha.job(parked.body.id);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await deployment?.close();
  });

  it('refuses a wrong key on the form with the reason, then opens the job list with the right one', async () => {
    await withPage('wrong-then-right-key', async (page) => {
      const jobLists: Response[] = [];
      page.on('response', (response) => {
        if (new URL(response.url()).pathname === '/v1/jobs') jobLists.push(response);
      });
      await signIn(page, orchestrator.url, 'not-a-key-of-anybody-000');
      const refused = page.getByTestId('key-refused');
      await refused.waitFor({ timeout: SHOWN_MS });
      expect(await refused.textContent()).toMatch(/refused \(401\): unknown API key/);
      // A refused key is not kept: nothing was asked with it beyond the check.
      expect(jobLists).toEqual([]);

      await page.getByTestId('key-gate').locator('input[name=apiKey]').fill(TEAM_KEYS.alpha);
      await page.getByTestId('key-gate').locator('button[type=submit]').click();
      await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
      const expected = ((await alpha.request('GET', '/v1/jobs')).body.jobs as Json[]).map((job) => job.id);
      await expect
        .poll(async () => (await listed(page)).map((row) => row.id), { timeout: SHOWN_MS })
        .toEqual(expected);
      // The list refreshes itself: its next request goes out with the key too, and the page stays.
      await page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/jobs', {
        timeout: SHOWN_MS,
      });
      expect(await page.getByTestId('key-gate').count()).toBe(0);
      expect(jobLists.length).toBeGreaterThanOrEqual(2);
      for (const response of jobLists) {
        expect(response.status()).toBe(200);
        expect(await response.request().headerValue('authorization')).toBe(`Bearer ${TEAM_KEYS.alpha}`);
      }
      expect(await page.getByTestId('signed-in-as').textContent()).toBe('team alpha');
    });
  });

  it("lands an operator on every team's jobs, with a team column and filter, and no answer buttons", async () => {
    await withPage('operator-jobs', async (page) => {
      await signIn(page, orchestrator.url, TEAM_KEYS.operator);
      await page.getByTestId('job-list').waitFor({ timeout: SHOWN_MS });
      expect(await page.getByTestId('signed-in-as').textContent()).toBe('operator (read-only)');
      await expect
        .poll(() => listed(page), { timeout: SHOWN_MS })
        .toEqual([
          { id: alphaParked.id, team: 'alpha' },
          { id: betaBatch.id, team: 'beta' },
          { id: alphaBatch.id, team: 'alpha' },
        ]);
      expect(await page.getByTestId('job-team').allTextContents()).toEqual(['alpha', 'beta', 'alpha']);

      await page.getByTestId('job-filters').locator('input[name=team]').fill('beta');
      await page.getByTestId('job-filters').locator('button[type=submit]').click();
      await expect
        .poll(() => listed(page), { timeout: SHOWN_MS })
        .toEqual([{ id: betaBatch.id, team: 'beta' }]);
      expect(new URL(page.url()).searchParams.get('team')).toBe('beta');
      await page.screenshot({ path: screenshotPath('operator-jobs-beta'), fullPage: true });

      // Another team's parked job: what it waits for, without Approve or Deny.
      await page.goto(`${orchestrator.url}/console/jobs/${alphaParked.id}`);
      const card = page.locator('[data-testid=pending-input][data-kind=approval][data-call-id=close]');
      await card.waitFor({ timeout: SHOWN_MS });
      expect(await page.getByTestId('pending-inputs').textContent()).toContain('Waiting for team alpha');
      expect(await card.textContent()).toContain('K-1');
      expect(await page.getByTestId('approve').count()).toBe(0);
      expect(await page.getByTestId('deny').count()).toBe(0);
      await page.screenshot({ path: screenshotPath('operator-parked-job'), fullPage: true });

      // The fleet pages, from the navigation.
      await page.getByRole('link', { name: 'Servers' }).click();
      await page.locator('[data-testid=session][data-worker=w-keys]').first().waitFor({ timeout: SHOWN_MS });
    });
  });

  it('shows a team key only its own jobs, without a team column', async () => {
    await withPage('team-jobs', async (page) => {
      await signIn(page, orchestrator.url, TEAM_KEYS.beta);
      await expect
        .poll(() => listed(page), { timeout: SHOWN_MS })
        .toEqual([{ id: betaBatch.id, team: 'beta' }]);
      expect(await page.getByTestId('job-team').count()).toBe(0);
      expect(await page.getByTestId('job-filters').locator('input[name=team]').count()).toBe(0);
      // Another team's job by its address: the API's 404, shown as such.
      await page.goto(`${orchestrator.url}/console/jobs/${alphaBatch.id}`);
      await page.getByTestId('error').waitFor({ timeout: SHOWN_MS });
      expect(await page.getByTestId('error').textContent()).toContain(`404`);
    });
  });

  it('opens /console/jobs?status=… with the filter applied', async () => {
    await withPage('deep-link', async (page) => {
      await signIn(page, orchestrator.url, TEAM_KEYS.alpha, '/console/jobs?status=input_required');
      await expect
        .poll(() => listed(page), { timeout: SHOWN_MS })
        .toEqual([{ id: alphaParked.id, team: 'alpha' }]);
      const filters = page.getByTestId('job-filters');
      expect(await filters.locator('input[name=status][value=input_required]').isChecked()).toBe(true);
      expect(await page.getByText('No such page.').count()).toBe(0);

      // Typed into the address bar once signed in: the same.
      await page.goto(`${orchestrator.url}/console/jobs?status=succeeded`);
      await expect
        .poll(() => listed(page), { timeout: SHOWN_MS })
        .toEqual([{ id: alphaBatch.id, team: 'alpha' }]);
    });
  });
});
