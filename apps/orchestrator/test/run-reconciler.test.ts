import { randomUUID } from 'node:crypto';
import { AGENT_RUNS_QUEUE, parseConfig, redisKeys, type Store } from '@switchyard/contracts';
import type pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import type { JobRunner } from '../src/agent/runs/job-runner.ts';
import { AgentRunQueue } from '../src/jobs/agent-run-queue.ts';
import { type JobRecord, JobStore } from '../src/jobs/job-store.ts';
import { QueueEpochs } from '../src/jobs/queue-epochs.ts';
import { OpenRuns } from '../src/reconcile/open-runs.ts';
import { RunReconciler } from '../src/reconcile/run-reconciler.ts';

import { createPool, migrate } from '../src/runtime/database.ts';
import { DATABASE_URL, dropJobSchema } from './fixtures/job-schema.ts';

/** What a case does to the queues behind BullMQ's back, on each backend. */
function queueData(store: Store, runs: AgentRunQueue) {
  if (store.kind === 'redis') {
    return {
      /** Redis restarted empty. */
      loseEverything: async () => {
        const keys = await store.redis.keys(`${store.prefix}:*`);
        if (keys.length > 0) await store.redis.del(...keys);
      },
      runsEpoch: () => store.redis.get(redisKeys.epoch(store.prefix, 'agent-runs')),
      /** BullMQ's own endings, as its worker writes them: finishedOn, and failedReason for a failure. */
      finish: async (id: string, failedReason?: string) => {
        const finishedOn = String(Date.now());
        await store.redis.hset(
          runs.queue.toKey(id),
          failedReason ? { finishedOn, failedReason } : { finishedOn, returnvalue: 'null' },
        );
      },
    };
  }
  return {
    /** The queue schema restored from a backup that predates every job. */
    loseEverything: async () => {
      await store.pool.query('DELETE FROM job WHERE queue = $1', [AGENT_RUNS_QUEUE]);
      await store.pool.query('DELETE FROM epoch');
    },
    runsEpoch: async () =>
      (await store.pool.query<{ epoch: string }>(`SELECT epoch FROM epoch WHERE tag = 'agent-runs'`)).rows[0]
        ?.epoch,
    finish: async (id: string, failedReason?: string) => {
      await store.pool.query(
        `UPDATE job SET state = $3, finished_at_ms = $4, failed_reason = $5 WHERE queue = $1 AND id = $2`,
        [AGENT_RUNS_QUEUE, id, failedReason ? 'failed' : 'completed', Date.now(), failedReason ?? null],
      );
    },
  };
}

/**
 * Real PostgreSQL (a fresh schema) for the record, and the queues on each backend: PostgreSQL holds
 * open jobs whose `{agent-runs}` entries are gone, as after the queues lost their data; a round queues
 * their runs again.
 */
describe.each(contractBackends)('RunReconciler with the queues on $name', (backend) => {
  const schema = `sy_test_reconcile_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let pool: pg.Pool;
  let store: JobStore;
  let opened: OpenedStore | undefined;
  let runs: AgentRunQueue;
  let queues: ReturnType<typeof queueData>;
  const runningHere = new Set<string>();
  const givenUp: Array<{ id: string; reason: string }> = [];
  let reconciler: RunReconciler;

  beforeAll(async () => {
    pool = createPool(DATABASE_URL, schema);
    await migrate(pool, schema);
    store = new JobStore(pool);
    opened = await backend.open();
    runs = new AgentRunQueue(opened.store);
    queues = queueData(opened.store, runs);
    const runner = {
      isRunningHere: (id: string) => runningHere.has(id),
      giveUp: async (id: string, reason: string) => {
        givenUp.push({ id, reason });
      },
    } as unknown as JobRunner;
    const config = parseConfig({ servers: {} });
    reconciler = new RunReconciler(
      new OpenRuns(pool),
      runs,
      new QueueEpochs(opened.store),
      runner,
      opened.store,
      config,
      pino({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await runs?.onModuleDestroy();
    await opened?.close();
    await dropJobSchema(pool, schema);
  });

  /** A job as the API stores it, made `ageSeconds` old, in `status`. */
  async function job(
    id: string,
    status: JobRecord['status'],
    kind: JobRecord['kind'] = 'batch',
    ageSeconds = 60,
  ) {
    await store.create(
      {
        id,
        team: 'alpha',
        kind,
        request: { kind: 'batch', calls: [{ tool: 'search__search', arguments: {} }] },
        traceId: 't1',
        traceparent: '00-t1-s1-01',
        idempotencyKey: null,
        requestDigest: null,
      },
      1_000,
    );
    await pool.query(
      `UPDATE jobs SET status = $2, created_at = now() - make_interval(secs => $3) WHERE id = $1`,
      [id, status, ageSeconds],
    );
  }

  it('queues again the runs PostgreSQL shows open whose {agent-runs} job is gone, and only those', async () => {
    await job('j-queued', 'queued', 'batch', 90);
    await job('j-running', 'running', 'agent', 80);
    await job('j-parked', 'input_required', 'agent', 70);
    await pool.query(
      `INSERT INTO tool_call_inputs (job_id, tool_call_id, kind, round, server, tool, request, expires_at)
       VALUES ('j-parked', 'w1', 'approval', 0, 'notes', 'add_note', '{}', now() + interval '10 minutes')`,
    );
    await job('j-present', 'running', 'batch', 60);
    await runs.enqueue('j-present');
    await job('j-finished', 'succeeded', 'batch', 50);
    await job('j-gateway', 'running', 'mcp', 40);
    await job('j-young', 'queued', 'batch', 0);
    await job('j-here', 'running', 'batch', 30);
    runningHere.add('j-here');

    const first = await reconciler.round();
    // Oldest first; the gateway's job has no run, a young one may still be on its way in, and one this
    // replica still runs is left to stop first.
    expect(first).toEqual(['j-queued', 'j-running', 'j-parked']);
    expect(await runs.queue.getJobState('j-queued')).toBe('waiting');
    expect(await runs.queue.getJobState('j-running')).toBe('waiting');
    // Parked again until its earliest expiry, as the consumer parks it; an answer promotes it.
    const parked = await runs.queue.getJob('j-parked');
    expect(await parked?.getState()).toBe('delayed');
    expect(parked?.delay).toBeGreaterThan(9 * 60_000);
    for (const absent of ['j-finished', 'j-gateway', 'j-young', 'j-here'])
      expect(await runs.queue.getJobState(absent), absent).toBe('unknown');
    // The epochs exist now, for every replica to compare against.
    expect(await queues.runsEpoch()).toBeTruthy();

    // Idempotent: what is queued is not queued twice.
    expect(await reconciler.round()).toEqual([]);

    // The queues lost their data again: the next round notices the new epoch and sweeps everything again.
    await queues.loseEverything();
    runningHere.delete('j-here');
    expect((await reconciler.round()).sort()).toEqual([
      'j-here',
      'j-parked',
      'j-present',
      'j-queued',
      'j-running',
    ]);
    expect(await runs.queue.getJobState('j-present')).toBe('waiting');

    await runs.wake('j-parked');
    expect(await runs.queue.getJobState('j-parked')).toBe('waiting');
  });

  it('marks failed a run its queue failed for good, and revives one that completed without ending its job', async () => {
    await job('j-failed-run', 'running', 'batch', 120);
    await job('j-completed-run', 'running', 'agent', 110);
    await runs.enqueue('j-failed-run');
    await runs.enqueue('j-completed-run');
    await queues.finish('j-failed-run', 'job stalled more than allowable limit');
    await queues.finish('j-completed-run');
    givenUp.length = 0;
    const requeued = await reconciler.round();
    expect(givenUp).toEqual([{ id: 'j-failed-run', reason: 'job stalled more than allowable limit' }]);
    expect(requeued).toContain('j-completed-run');
    expect(requeued).not.toContain('j-failed-run');
    const revived = await runs.queue.getJob('j-completed-run');
    expect(revived?.finishedOn).toBeUndefined();
    expect(await revived?.getState()).toBe('waiting');
  });

  it('records the epoch with the dispatched call and keeps the first one on a re-dispatch', async () => {
    await job('j-calls', 'running');
    const row = {
      jobId: 'j-calls',
      toolCallId: 'c1',
      position: 0,
      modelTool: 'notes__add_note',
      server: 'notes',
      tool: 'add_note',
      arguments: {},
    };
    await store.recordCall(row, 'dispatched', undefined, 'epoch-1');
    expect((await store.toolCall('j-calls', 'c1'))?.redisEpoch).toBe('epoch-1');
    await store.recordCall(row, 'dispatched', { type: 'tool_call.dispatched', data: {} }, 'epoch-2');
    expect((await store.toolCall('j-calls', 'c1'))?.redisEpoch).toBe('epoch-1');
    // A question's answered retry is a new add: its epoch is recorded with it.
    await store.recordCall(row, 'awaiting_input');
    expect((await store.toolCall('j-calls', 'c1'))?.redisEpoch).toBe('epoch-1');
    await store.recordCall(row, 'dispatched', undefined, 'epoch-3');
    expect((await store.toolCall('j-calls', 'c1'))?.redisEpoch).toBe('epoch-3');
    await store.recordCall({ ...row, toolCallId: 'c2' }, 'admitted', undefined, 'ignored');
    expect((await store.toolCall('j-calls', 'c2'))?.redisEpoch).toBeNull();
  });
});
