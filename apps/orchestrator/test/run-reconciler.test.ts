import { randomUUID } from 'node:crypto';
import { parseConfig, redisKeys } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRunner } from '../src/agent/runs/job-runner.ts';
import { AgentRunQueue } from '../src/jobs/agent-run-queue.ts';
import { type JobRecord, JobStore } from '../src/jobs/job-store.ts';
import { RedisEpochs } from '../src/jobs/redis-epochs.ts';
import { OpenRuns } from '../src/reconcile/open-runs.ts';
import { RunReconciler } from '../src/reconcile/run-reconciler.ts';
import { createPool, migrate } from '../src/runtime/database.ts';
import type { OrchestratorEnv } from '../src/runtime/orchestrator-env.ts';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = `sy-test-reconcile-${randomUUID().slice(0, 8)}`;
const env = { prefix, replicaId: 'r-test' } as OrchestratorEnv;

/**
 * Real PostgreSQL (a fresh schema) and Redis (an own prefix): PostgreSQL holds open jobs whose
 * `{agent-runs}` entries are gone, as after Redis restarted empty; a round queues their runs again.
 */
describe('RunReconciler', () => {
  const schema = `sy_test_reconcile_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let pool: pg.Pool;
  let store: JobStore;
  let runs: AgentRunQueue;
  const runningHere = new Set<string>();
  const givenUp: Array<{ id: string; reason: string }> = [];
  let reconciler: RunReconciler;

  beforeAll(async () => {
    pool = createPool(DATABASE_URL, schema);
    await migrate(pool, schema);
    store = new JobStore(pool);
    runs = new AgentRunQueue(redis, env);
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
      new RedisEpochs(redis, env),
      runner,
      redis,
      config,
      pino({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await runs?.onModuleDestroy();
    await pool?.end();
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await admin.end();
    }
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
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
    expect(await redis.get(redisKeys.epoch(prefix, 'agent-runs'))).toBeTruthy();

    // Idempotent: what is queued is not queued twice.
    expect(await reconciler.round()).toEqual([]);

    // Redis lost its data again: the next round notices the new epoch and sweeps everything again.
    const keys = await redis.keys(`${prefix}:*`);
    await redis.del(...keys);
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
    // BullMQ's own endings, as its worker writes them: finishedOn, and failedReason for a failure.
    const failedAt = String(Date.now());
    await redis.hset(runs.queue.toKey('j-failed-run'), {
      finishedOn: failedAt,
      failedReason: 'job stalled more than allowable limit',
    });
    await redis.hset(runs.queue.toKey('j-completed-run'), { finishedOn: failedAt, returnvalue: 'null' });
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
