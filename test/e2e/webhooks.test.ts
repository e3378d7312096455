import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { type ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver.ts';

const ALPHA_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const TEAM_HOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** Long enough that a view read right after a failed attempt still finds the delivery waiting. */
const BACKOFF_MS = 4_000;

const payloadOf = (request: ReceivedWebhook): Json => JSON.parse(request.body);
const forJob = (jobId: string, path: string) => (request: ReceivedWebhook) =>
  request.path === path && payloadOf(request).data.id === jobId;

/**
 * Webhooks as a customer sees them: signed per the Standard Webhooks spec (checked with the
 * `standardwebhooks` library a receiver would use), retried with backoff through BullMQ until the
 * receiver answers 2xx, and every attempt visible on GET /v1/jobs/:id/webhooks.
 */
describe('job webhooks', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  const receiver = new WebhookReceiver();

  const batch = (webhook?: Record<string, unknown>) => ({
    kind: 'batch',
    calls: [{ tool: 'search__search', arguments: { query: 'queue' } }],
    metadata: { purpose: 'webhook-test' },
    ...(webhook ? { webhook } : {}),
  });
  const deliveries = async (jobId: string): Promise<Json[]> => {
    const response = await alpha.request('GET', `/v1/jobs/${jobId}/webhooks`);
    expect(response.status).toBe(200);
    return response.body.deliveries;
  };
  const delivered = (jobId: string, target: string) =>
    orchestrator.process.waitFor(
      (log) => log.msg === 'webhook delivered' && log.job_id === jobId && log.target === target,
      `webhook ${target} of ${jobId} delivered`,
      60_000,
    );

  beforeAll(async () => {
    await receiver.start();
    deployment = new Deployment('webhooks', () => ({ search: exampleServer('search', { trusted: true }) }), {
      teams: {
        alpha: {
          apiKeys: [TEAM_KEYS.alpha],
          webhookSecret: ALPHA_SECRET,
          webhooks: [
            {
              url: receiver.url('/team'),
              events: ['job.running', 'job.succeeded'],
              secret: TEAM_HOOK_SECRET,
            },
          ],
        },
        beta: { apiKeys: [TEAM_KEYS.beta] },
      },
      orchestrator: {
        // The receiver listens on loopback, which webhooks reach only when an operator allows it.
        webhooks: {
          attempts: 4,
          backoffMs: BACKOFF_MS,
          timeoutMs: 5_000,
          allowPrivateNetworks: ['127.0.0.1/32'],
        },
      },
    });
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-webhooks');
    alpha = orchestrator.api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
    await receiver.stop();
  });

  it('delivers a signed job.succeeded to the job webhook and the chosen events to the team webhook', async () => {
    const submitted = await alpha.submit(batch({ url: receiver.url('/ok') }));
    expect(submitted.status).toBe(201);
    const jobId = submitted.body.id as string;

    const [request] = await receiver.waitFor(forJob(jobId, '/ok'), 'the job webhook');
    if (!request) throw new Error('no request');
    // What a receiver does: verify with its secret, then trust the body.
    const verified = new Webhook(ALPHA_SECRET).verify(request.body, request.headers) as Json;
    expect(verified).toMatchObject({
      type: 'job.succeeded',
      data: {
        id: jobId,
        kind: 'batch',
        status: 'succeeded',
        metadata: { purpose: 'webhook-test' },
        links: { job: `/v1/jobs/${jobId}` },
      },
    });
    expect(request.headers['webhook-id']).toBe(`${jobId}.job.succeeded.job`);
    // A changed body, or another team's secret, does not verify.
    expect(() =>
      new Webhook(ALPHA_SECRET).verify(request.body.replace('succeeded', 'failed'), request.headers),
    ).toThrow();
    expect(() => new Webhook(TEAM_HOOK_SECRET).verify(request.body, request.headers)).toThrow();

    // The team webhook asked for running and succeeded (not the default end events), signed with its own secret.
    const teamHooks = await receiver.waitFor(forJob(jobId, '/team'), 'both team webhooks', 2);
    const types = teamHooks.map(
      (hook) => (new Webhook(TEAM_HOOK_SECRET).verify(hook.body, hook.headers) as Json).type,
    );
    expect(types.sort()).toEqual(['job.running', 'job.succeeded']);

    await delivered(jobId, 'job');
    const views = await deliveries(jobId);
    expect(views.find((view) => view.target === 'job')).toMatchObject({
      id: `${jobId}.job.succeeded.job`,
      event: 'job.succeeded',
      url: receiver.url('/ok'),
      state: 'delivered',
      attempts: 1,
      lastStatusCode: 204,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('retries a failing receiver with backoff, shows each attempt, then delivers', async () => {
    let viewDuringThirdAttempt: Json[] = [];
    receiver.on('/flaky', async (request, nth) => {
      if (nth < 3) return { status: 500, body: `receiver down (attempt ${nth})` };
      viewDuringThirdAttempt = await deliveries(payloadOf(request).data.id);
      return { status: 200 };
    });
    const submitted = await alpha.submit(batch({ url: receiver.url('/flaky') }));
    const jobId = submitted.body.id as string;

    await orchestrator.process.waitFor(
      (log) => log.msg === 'webhook attempt failed (retrying)' && log.job_id === jobId && log.attempt === 1,
      'the first attempt to fail',
    );
    const [waiting] = (await deliveries(jobId)).filter((view) => view.target === 'job');
    expect(waiting).toMatchObject({
      state: 'retrying',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'answered 500 (Internal Server Error)',
      deliveredAt: null,
    });
    expect(Date.parse(waiting.nextAttemptAt)).toBeGreaterThan(Date.parse(waiting.lastAttemptAt));

    await delivered(jobId, 'job');
    const attempts = receiver.received.filter(forJob(jobId, '/flaky'));
    expect(attempts).toHaveLength(3);
    // One message, three attempts: the same webhook-id each time (receivers dedupe on it), each signed.
    expect(new Set(attempts.map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
    for (const attempt of attempts) new Webhook(ALPHA_SECRET).verify(attempt.body, attempt.headers);
    // Exponential backoff: the second retry waited at least twice the base delay (BullMQ's lower bound).
    const [first, second, third] = attempts.map((attempt) => attempt.at) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(BACKOFF_MS - 100);
    expect(third - second).toBeGreaterThanOrEqual(2 * BACKOFF_MS - 100);

    expect(viewDuringThirdAttempt.find((view) => view.target === 'job')).toMatchObject({
      state: 'sending',
      attempts: 2,
      lastStatusCode: 500,
      lastError: 'answered 500 (Internal Server Error)',
    });
    expect((await deliveries(jobId)).find((view) => view.target === 'job')).toMatchObject({
      state: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
    });

    const metrics = await (await fetch(`${orchestrator.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_webhook_deliveries_total\{team="alpha",event="job.succeeded",result="retrying"\} [2-9]/,
    );
  });

  it('does not follow a redirect: the attempt fails and the other host hears nothing', async () => {
    receiver.on('/moved', async () => ({ status: 307, headers: { location: receiver.url('/elsewhere') } }));
    const submitted = await alpha.submit(batch({ url: receiver.url('/moved') }));
    const jobId = submitted.body.id as string;
    const failed = await orchestrator.process.waitFor(
      (log) =>
        log.msg === 'webhook attempt failed (retrying)' && log.job_id === jobId && log.target === 'job',
      'the redirected attempt to fail',
    );
    expect(failed.status_code).toBe(307);
    expect(failed.error).toBe('answered 307 (redirects are not followed)');
    expect(receiver.received.filter((request) => request.path === '/elsewhere')).toHaveLength(0);
    // The secret is never logged.
    const secretPart = ALPHA_SECRET.slice('whsec_'.length);
    expect(orchestrator.process.lines.some((line) => line.includes(secretPart))).toBe(false);
  });

  it('gives up after the configured attempts and shows the delivery failed', async () => {
    receiver.on('/gone', async () => ({ status: 410, body: 'no such hook' }));
    const failedForGood = async () => {
      const metrics = await (await fetch(`${orchestrator.url}/metrics`)).text();
      const series = 'switchyard_webhook_deliveries_total{team="alpha",event="job.running",result="failed"} ';
      const line = metrics.split('\n').find((candidate) => candidate.startsWith(series));
      return line ? Number(line.slice(series.length)) : 0;
    };
    const failedBefore = await failedForGood();
    // Only this test's job webhook asks for job.running, so that metric series is its own.
    const submitted = await alpha.submit(batch({ url: receiver.url('/gone'), events: ['job.running'] }));
    const jobId = submitted.body.id as string;
    await orchestrator.process.waitFor(
      (log) => log.msg === 'webhook attempt failed (failed)' && log.job_id === jobId && log.target === 'job',
      'the last attempt to fail',
      120_000,
    );
    expect(receiver.received.filter(forJob(jobId, '/gone'))).toHaveLength(4);
    expect((await deliveries(jobId)).find((view) => view.target === 'job')).toMatchObject({
      event: 'job.running',
      state: 'failed',
      attempts: 4,
      lastStatusCode: 410,
      lastError: 'answered 410 (Gone)',
      nextAttemptAt: null,
      deliveredAt: null,
    });
    expect((await failedForGood()) - failedBefore).toBe(1);
  }, 150_000);

  it('refuses a job webhook the team cannot sign, and a URL that is not http(s)', async () => {
    const unsigned = await orchestrator.api('beta').submit(batch({ url: receiver.url('/ok') }));
    expect(unsigned.status).toBe(400);
    expect(JSON.stringify(unsigned.body)).toContain('teams.beta.webhookSecret');
    const ftp = await alpha.submit(batch({ url: 'ftp://example.com/hook' }));
    expect(ftp.status).toBe(400);
    expect(JSON.stringify(ftp.body)).toContain('webhook');
    const badEvent = await alpha.submit(batch({ url: receiver.url('/ok'), events: ['job.exploded'] }));
    expect(badEvent.status).toBe(400);
  });

  it("another team cannot read a job's deliveries", async () => {
    const submitted = await alpha.submit(batch());
    const response = await orchestrator.api('beta').request('GET', `/v1/jobs/${submitted.body.id}/webhooks`);
    expect(response.status).toBe(404);
  });
});
