import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deployment, FAST_ORCHESTRATOR_SETTINGS, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { recordedIntervals } from '../support/intervals.ts';
import type { TestProcess } from '../support/processes.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

/** The stalled checks run rarely here, so they cannot move the run (or its call) before it is taken back. */
const RARE_STALLED_CHECK = { stalledIntervalMs: 120_000 };

/**
 * Redis paused (SIGSTOP) past the lock of a run while the run waits for its call: when Redis answers
 * again, the lock has merely expired and nobody took the run, so the replica takes it back and goes on.
 * A Redis pause is not a hand-over: before, the replica stopped the run, which then waited for the
 * stalled check and counted as a stall (ten of those and BullMQ fails the run). The call itself: its
 * worker heard nothing from Redis for a lock duration, so it aborted the call (it cannot tell a paused
 * Redis from a partition, docs/semantics.md §1); once Redis answered the job was still its own, so the
 * abort counts as a lost connection and the idempotent call ran again (the recorder ignores the cancel
 * and finishes both).
 */
describe('a run whose lock expired while Redis was paused', () => {
  const redis = new DedicatedRedis();
  let deployment: Deployment;
  let worker: TestProcess;
  let replica: Orchestrator;
  let paused = false;

  beforeAll(async () => {
    await redis.start();
    deployment = new Deployment(
      'run-take-back',
      (dir) => ({
        recorder: exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/rec.jsonl` },
          idempotent: ['record'],
        }),
      }),
      { redisUrl: redis.url, orchestrator: RARE_STALLED_CHECK, worker: RARE_STALLED_CHECK },
    );
    worker = await deployment.startWorker({ id: 'w-take-back' });
    replica = await deployment.startOrchestrator('o-take-back');
  }, 120_000);

  afterAll(async () => {
    if (paused) process.kill(redis.pid as number, 'SIGCONT');
    await deployment?.close();
    await redis.stop();
  });

  it('is taken back by its replica and finishes there, without a hand-over', {
    timeout: 120_000,
  }, async () => {
    const api = replica.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'recorder__record', arguments: { ms: 6_000, label: 'held' } }],
    });
    expect(submitted.status).toBe(201);
    const id = String(submitted.body.id);
    await worker.waitFor((log) => log.msg === 'tool call sent' && log.job_id === id, 'the call sent');

    process.kill(redis.pid as number, 'SIGSTOP');
    paused = true;
    // The fault itself: Redis stays frozen until the run's lock has expired.
    await delay(FAST_ORCHESTRATOR_SETTINGS.lockDurationMs + 1_500);
    process.kill(redis.pid as number, 'SIGCONT');
    paused = false;

    const job = await api.finishedDespiteOutages(id, 60_000);
    expect(job.status).toBe('succeeded');
    expect(job.toolCalls[0].outcome).toMatchObject({ status: 'ok', executed: 'yes', attempts: 2 });
    expect(job.toolCalls[0].attempts[0].error).toMatch(/no answer from Redis/);
    expect(
      recordedIntervals(deployment.path('rec.jsonl')).filter((row) => row.label === 'held'),
    ).toHaveLength(2);
    expect(worker.logs.some((log) => log.msg === 'job no longer ours: no outcome recorded')).toBe(false);
    const said = (msg: string) =>
      replica.process.logs.filter((log) => log.msg === msg && log.job_id !== undefined);
    expect(said('expired lock of a run taken back').length).toBeGreaterThan(0);
    expect(said('lost the lock of a run; stopping it here')).toEqual([]);
  });
});
