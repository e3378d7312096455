import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { TEST_BACKEND } from '../support/backend.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { connectGateway, type GatewayClient } from '../support/mcp-clients.ts';

/**
 * Issue 21's promise: on the postgres backend no Redis client is created. Every process of the deployment
 * is given a REDIS_URL that points at a listener this suite owns (the harness leaves REDIS_* out on
 * postgres; `processEnv` puts one back), so any code path that constructs ioredis from the environment
 * (which connects at once) shows up as an accepted connection. A batch job, an agent job and a /mcp call
 * run to completion through the orchestrator and a worker; the listener must have accepted none.
 */
describe.runIf(TEST_BACKEND === 'postgres')('no Redis client on the postgres backend', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  let listener: Server;
  let gateway: GatewayClient | undefined;
  /** Who connected: the peer of every connection the stand-in accepted. */
  const accepted: string[] = [];

  beforeAll(async () => {
    listener = createServer((socket) => {
      accepted.push(`${socket.remoteAddress}:${socket.remotePort}`);
      // No Redis here: a client that got this far would hang on its first command, so end it.
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => resolve());
    });
    const address = listener.address();
    if (!address || typeof address !== 'object') throw new Error('the Redis stand-in is not listening');

    deployment = new Deployment('no-redis', () => ({ search: exampleServer('search', { trusted: true }) }));
    // After the harness's postgres environment, so it reaches every worker and orchestrator started below.
    deployment.processEnv.REDIS_URL = `redis://127.0.0.1:${address.port}`;
    await deployment.startWorker({ id: 'w-no-redis' });
    orchestrator = await deployment.startOrchestrator('o-no-redis');
  }, 180_000);

  afterAll(async () => {
    await gateway?.close().catch(() => undefined);
    await deployment?.close();
    await new Promise((resolve) => (listener ? listener.close(resolve) : resolve(undefined)));
  });

  it('runs a batch job, an agent job and a /mcp call without one connection to Redis', {
    timeout: 180_000,
  }, async () => {
    const api = orchestrator.api('alpha');
    const batch = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'batch' } }],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    const agent = await api.submit({
      kind: 'agent',
      input: 'Search once.',
      model: {
        provider: 'scripted',
        script: [
          { toolCalls: [{ id: 'a1', tool: 'search__search', arguments: { query: 'agent' } }] },
          { final: 'Searched.' },
        ],
      },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);

    gateway = await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2025-11-25');
    const viaMcp: Json = await gateway.callTool({ name: 'search__search', arguments: { query: 'mcp' } });
    expect(viaMcp.isError ?? false).toBe(false);

    const [batchJob, agentJob]: Json[] = await Promise.all([
      api.finished(batch.body.id, 90_000),
      api.finished(agent.body.id, 90_000),
    ]);
    expect(batchJob.status).toBe('succeeded');
    expect(batchJob.toolCalls.map((call: Json) => call.status)).toEqual(['ok']);
    expect(agentJob.status).toBe('succeeded');
    expect(agentJob.toolCalls.map((call: Json) => call.status)).toEqual(['ok']);

    expect(accepted).toEqual([]);
  });
});
