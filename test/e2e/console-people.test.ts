import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { ensureConsoleBuilt, launchChromium, SHOWN_MS, screenshotPath, signIn } from '../support/browser.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

/**
 * People in the loop from the web console (issue 11 answered on the job page of issue 12): a tool's
 * question becomes a form built from its requested schema, an approval shows the exact arguments with
 * Approve bound to their digest; answering from the page resumes the parked run, in real Chromium.
 */
describe('web console: questions and approvals', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  let browser: Browser;
  let page: Page;
  const ledger = () => readLedger(deployment.path('teller.jsonl'));

  beforeAll(async () => {
    await ensureConsoleBuilt();
    deployment = new Deployment('console-people', (dir) => ({
      teller: exampleServer('teller', {
        env: { TELLER_LEDGER: `${dir}/teller.jsonl` },
        trusted: true,
        // close_account is destructive by its (trusted) annotations: `auto` makes it need approval.
        approval: { default: 'never', tools: { close_account: 'auto' } },
      }),
    }));
    await deployment.startWorker({ id: 'w-people' });
    orchestrator = await deployment.startOrchestrator('o-people');
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

  const agent = (script: unknown[]) => ({
    kind: 'agent',
    input: 'Do the banking.',
    model: { provider: 'scripted', script },
  });

  it('approves a destructive call from the job page; it runs once, after the approval', async () => {
    const submitted = await alpha.submit(
      agent([
        { toolCalls: [{ id: 'close', tool: 'teller__close_account', arguments: { account: 'A-7' } }] },
        { final: 'Closed.' },
      ]),
    );
    expect(submitted.status).toBe(201);
    await page.goto(`${orchestrator.url}/console/jobs/${submitted.body.id}`);
    const card = page.locator('[data-testid=pending-input][data-kind=approval][data-call-id=close]');
    await card.waitFor({ timeout: 60_000 });
    expect(await card.textContent()).toContain('A-7');
    // The request is recorded a moment before the run parks: the page follows the job to its status.
    await page.locator('[data-testid=job-page][data-status=input_required]').waitFor({ timeout: SHOWN_MS });
    const parked: Json = await alpha.job(submitted.body.id);
    expect(parked.status).toBe('input_required');
    expect(await card.textContent()).toContain(parked.pendingInputs[0].digest);
    // Nothing reached the server before the approval: the call says so, in the API and on the page.
    expect(ledger().filter((row) => row.account === 'A-7')).toEqual([]);
    const held = parked.toolCalls.find((call: Json) => call.id === 'close');
    expect(held).toMatchObject({ state: 'awaiting_approval', status: 'awaiting_approval', attempts: [] });
    expect(held.waits).toEqual([
      expect.objectContaining({ kind: 'approval', state: 'pending', answeredAt: null }),
    ]);
    const heldBar = page.locator('[data-testid=timeline-bar][data-call-id=close]');
    expect(await heldBar.getAttribute('data-status')).toBe('awaiting_approval');
    expect(await heldBar.locator('[data-testid=bar-person]').count()).toBe(1);
    expect(await heldBar.locator('[data-testid=bar-queue]').count()).toBe(0);
    expect(await page.getByTestId('call-table').getByTestId('status-chip').first().textContent()).toBe(
      'awaiting approval',
    );
    await page.screenshot({ path: screenshotPath('approval'), fullPage: true });

    await card.getByTestId('approve').click();
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('pending-inputs').count()).toBe(0);
    expect(ledger().filter((row) => row.account === 'A-7' && row.phase === 'done')).toHaveLength(1);
    const job: Json = await alpha.job(submitted.body.id);
    const closed = job.toolCalls.find((call: Json) => call.id === 'close');
    expect(closed.outcome.status).toBe('ok');
    // The wait for the person, then the queue and the one attempt, each drawn as what it was.
    expect(closed.waits).toEqual([
      expect.objectContaining({ kind: 'approval', state: 'answered', answeredAt: expect.any(String) }),
    ]);
    expect(closed.attempts).toHaveLength(1);
    const bar = page.locator('[data-testid=timeline-bar][data-call-id=close]');
    await bar.and(page.locator('[data-status=ok]')).waitFor({ timeout: SHOWN_MS });
    expect(await bar.locator('[data-testid=bar-person]').count()).toBe(1);
    expect(await bar.locator('[data-testid=bar-attempt]').count()).toBe(1);
    await page.screenshot({ path: screenshotPath('approved-timeline'), fullPage: true });
  });

  it("answers a tool's question with the form built from its requested schema", async () => {
    const submitted = await alpha.submit(
      agent([
        { toolCalls: [{ id: 'pay', tool: 'teller__transfer', arguments: { to: 'ACME', amount: 120 } }] },
        { final: 'Paid.' },
      ]),
    );
    expect(submitted.status).toBe(201);
    await page.goto(`${orchestrator.url}/console/jobs/${submitted.body.id}`);
    const form = page.locator('[data-testid=pending-input][data-kind=question][data-call-id=pay]');
    await form.waitFor({ timeout: 60_000 });
    expect(await form.textContent()).toContain('Confirm the transfer of 120 to ACME');
    await page.locator('[data-testid=job-page][data-status=input_required]').waitFor({ timeout: SHOWN_MS });
    // One field per property of the requested schema: a checkbox for the boolean, a text box for the string.
    await form.locator('input[type=checkbox][name=confirm]').check();
    await form.locator('input[type=text][name=memo]').fill('invoice 7');
    await page.screenshot({ path: screenshotPath('question'), fullPage: true });
    await form.getByTestId('accept').click();
    await page.locator('[data-testid=job-page][data-status=succeeded]').waitFor({ timeout: 60_000 });
    const job: Json = await alpha.job(submitted.body.id);
    expect(job.result).toBe('Paid.');
    const call = job.toolCalls.find((entry: Json) => entry.id === 'pay');
    expect(call.outcome.text).toContain('Transferred 120 to ACME');
    expect(ledger().filter((row) => row.tool === 'transfer' && row.phase === 'done')).toEqual([
      expect.objectContaining({ to: 'ACME', amount: 120, memo: 'invoice 7' }),
    ]);
  });
});
