import { AGENT_RUNS_QUEUE, primaries, toolQueueName } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { REDIS_CLUSTER_NODES, REDIS_URL } from '../support/redis.ts';

async function keysOf(node: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/**
 * Run only by the cluster configuration (vitest.cluster.config.ts): proves that the cluster run really
 * runs on the cluster — the apps' keys spread over the primaries by queue hash tag, none on the
 * machine's single Redis — while the other suites of that run prove the behaviour is the same.
 */
describe('a deployment on a Redis Cluster', () => {
  let deployment: Deployment;
  let api: ApiClient;

  beforeAll(async () => {
    expect(REDIS_CLUSTER_NODES, 'the cluster run sets REDIS_CLUSTER_NODES').not.toBe('');
    deployment = new Deployment('cluster', (dir) => ({
      search: exampleServer('search', { trusted: true }),
      notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` } }),
      slow: exampleServer('slow'),
    }));
    await deployment.startWorker({ id: 'w1' });
    api = (await deployment.startOrchestrator('o1')).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  it('runs batch and agent jobs with every queue in its own hash slot', async () => {
    const batch = await api.submit({
      kind: 'batch',
      calls: [
        { tool: 'search__search', arguments: { query: 'cluster' } },
        { tool: 'notes__add_note', arguments: { text: 'on a cluster' } },
        { tool: 'slow__sleep', arguments: { ms: 10 } },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    const agent = await api.submit({
      kind: 'agent',
      input: 'Search.',
      model: {
        provider: 'scripted',
        script: [{ toolCalls: [{ tool: 'search__search', arguments: { query: 'x' } }] }, { final: 'done' }],
      },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const [batchJob, agentJob] = await Promise.all([
      api.finished(batch.body.id),
      api.finished(agent.body.id),
    ]);
    expect(batchJob.status).toBe('succeeded');
    expect(batchJob.toolCalls.map((call: { status: string }) => call.status)).toEqual(['ok', 'ok', 'ok']);
    expect(agentJob.status).toBe('succeeded');

    const nodes = primaries(deployment.redis);
    expect(nodes.length).toBe(3);
    const perNode = await Promise.all(nodes.map((node) => keysOf(node, deployment.prefix)));
    const all = perNode.flat();
    for (const queue of ['search', 'notes', 'slow'].map(toolQueueName).concat(AGENT_RUNS_QUEUE)) {
      expect(all.some((key) => key.startsWith(`${deployment.prefix}:${queue}:`))).toBe(true);
    }
    // Four queues over three primaries: the keys cannot all sit on one node.
    expect(perNode.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
    for (const [index, keys] of perNode.entries()) {
      const slots = new Set(
        await Promise.all(keys.map(async (key) => Number(await nodes[index]?.cluster('KEYSLOT', key)))),
      );
      // Every queue's keys share one slot: at most one slot per queue on each node, plus the few
      // deployment-wide keys (catalog, workers, outcomes).
      expect(slots.size).toBeLessThanOrEqual(4 + 3);
    }

    const single = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await single.connect();
      expect(await keysOf(single, deployment.prefix)).toEqual([]);
    } finally {
      single.disconnect();
    }
  });
});
