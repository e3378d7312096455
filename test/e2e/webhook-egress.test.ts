import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const ALPHA_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Webhooks cannot be pointed inside the deployment (docs/operations.md, Webhooks): a job's webhook.url
 * at an internal address is a 400, a team webhook at one fails at delivery without a connection, and a
 * receiver's answer never comes back to the team (or into the log) beyond its status code.
 */
describe('webhook egress', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let alpha: ApiClient;
  // Allowed by the operator (127.0.0.1/32), like a receiver in a private network the deployment trusts.
  const receiver = new WebhookReceiver();
  // On 127.0.0.2: loopback too, but not allowed. Counts every connection made to it.
  const inside: Server = createServer((_request, response) => response.writeHead(204).end());
  let insideConnections = 0;
  let insidePort = 0;

  const batch = (webhook?: Record<string, unknown>) => ({
    kind: 'batch',
    calls: [{ tool: 'search__search', arguments: { query: 'egress' } }],
    ...(webhook ? { webhook } : {}),
  });
  const deliveries = async (jobId: string): Promise<Json[]> => {
    const response = await alpha.request('GET', `/v1/jobs/${jobId}/webhooks`);
    expect(response.status).toBe(200);
    return response.body.deliveries;
  };

  beforeAll(async () => {
    inside.on('connection', () => insideConnections++);
    inside.listen(0, '127.0.0.2');
    await once(inside, 'listening');
    insidePort = (inside.address() as AddressInfo).port;
    await receiver.start();
    deployment = new Deployment(
      'webhook-egress',
      () => ({ search: exampleServer('search', { trusted: true }) }),
      {
        teams: {
          alpha: {
            apiKeys: [TEAM_KEYS.alpha],
            webhookSecret: ALPHA_SECRET,
            // An operator's team webhook is not checked at submit: it is refused when delivered.
            webhooks: [{ url: `http://127.0.0.2:${insidePort}/team`, events: ['job.succeeded'] }],
          },
        },
        orchestrator: {
          webhooks: {
            attempts: 3,
            backoffMs: 2_000,
            timeoutMs: 5_000,
            allowPrivateNetworks: ['127.0.0.1/32'],
          },
        },
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator('o-egress');
    alpha = orchestrator.api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
    await receiver.stop();
    inside.closeAllConnections();
    await new Promise((resolve) => inside.close(resolve));
  });

  it.each([
    ['http://127.0.0.2:{port}/hook', '127.0.0.2 is loopback'],
    ['http://2130706434:{port}/hook', '127.0.0.2 is loopback'],
    ['http://0x7f000002:{port}/hook', '127.0.0.2 is loopback'],
    ['http://[::ffff:127.0.0.2]:{port}/hook', '::ffff:7f00:2 is loopback, IPv4-mapped 127.0.0.2'],
    ['http://[::1]:6379/', '::1 is loopback'],
    ['http://localhost:5432/', 'localhost is a loopback name'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is cloud metadata'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is cloud metadata'],
    [
      'http://metadata.google.internal/computeMetadata/v1/',
      'metadata.google.internal is a cloud metadata name',
    ],
    ['http://10.0.0.1/hook', '10.0.0.1 is private'],
  ])('refuses a job webhook at %s with a 400 naming webhook.url', async (template, reason) => {
    const url = template.replace('{port}', String(insidePort));
    const response = await alpha.submit(batch({ url }));
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { path: 'webhook.url', message: `must not point inside the deployment: ${reason}` },
    ]);
    expect(insideConnections).toBe(0);
  });

  it('fails a team webhook at an internal address at delivery, once, without connecting', async () => {
    const submitted = await alpha.submit(batch());
    expect(submitted.status).toBe(201);
    const jobId = submitted.body.id as string;
    const failed = await orchestrator.process.waitFor(
      (log) =>
        log.msg === 'webhook attempt failed (failed)' && log.job_id === jobId && log.target === 'team-0',
      'the team webhook to be refused',
      60_000,
    );
    expect(failed.error).toBe('refused: 127.0.0.2 is loopback');
    expect((await deliveries(jobId)).find((view) => view.target === 'team-0')).toMatchObject({
      state: 'failed',
      // Refusing the same literal address again cannot help: no retries.
      attempts: 1,
      lastStatusCode: null,
      lastError: 'refused: 127.0.0.2 is loopback',
      nextAttemptAt: null,
    });
    expect(insideConnections).toBe(0);
  });

  it("shows the team a receiver's status code, never its body", async () => {
    receiver.on('/leaky', async () => ({
      status: 500,
      headers: { 'content-type': 'text/plain' },
      body: 'db_password=secret',
    }));
    const submitted = await alpha.submit(batch({ url: receiver.url('/leaky') }));
    expect(submitted.status).toBe(201);
    const jobId = submitted.body.id as string;
    await orchestrator.process.waitFor(
      (log) =>
        log.msg === 'webhook attempt failed (retrying)' && log.job_id === jobId && log.target === 'job',
      'the first attempt to fail',
      60_000,
    );
    const views = await deliveries(jobId);
    expect(views.find((view) => view.target === 'job')).toMatchObject({
      state: 'retrying',
      attempts: 1,
      lastStatusCode: 500,
      lastError: 'answered 500 (Internal Server Error)',
    });
    expect(JSON.stringify(views)).not.toContain('db_password');
    expect(orchestrator.process.lines.some((line) => line.includes('db_password'))).toBe(false);
  });
});
