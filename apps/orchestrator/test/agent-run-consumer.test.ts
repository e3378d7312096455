import { randomUUID } from 'node:crypto';
import { AGENT_RUNS_QUEUE, parseConfig, redisStore } from '@switchyard/contracts';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentRunConsumer } from '../src/agent/runs/agent-run-consumer.ts';
import type { JobRunner } from '../src/agent/runs/job-runner.ts';
import { AgentRunQueue } from '../src/jobs/agent-run-queue.ts';
import type { InputStore } from '../src/jobs/input-store.ts';
import type { OrchestratorEnv } from '../src/runtime/orchestrator-env.ts';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const prefix = `sy-test-runs-${randomUUID().slice(0, 8)}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/**
 * A run whose replica keeps losing its lock (frozen, starved) is failed by BullMQ after
 * maxStalledCount stalls, unrecoverably, with attempts left. The job must still end instead of
 * staying `running` forever (real Redis and BullMQ; the runner is a stand-in that records calls).
 */
describe('agent-run consumer', () => {
  it('gives up a run that BullMQ failed for stalling too often', { timeout: 60_000 }, async () => {
    const env = { prefix, replicaId: 'r-test' } as OrchestratorEnv;
    const config = parseConfig({
      servers: {},
      orchestrator: { lockDurationMs: 500, stalledIntervalMs: 250 },
    });
    const runs = new AgentRunQueue(redisStore(redis, prefix));
    const hung: Array<() => void> = [];
    let gaveUp: (value: { jobId: string; reason: string }) => void = () => undefined;
    const givenUp = new Promise<{ jobId: string; reason: string }>((resolve) => {
      gaveUp = resolve;
    });
    const runner = {
      // Every attempt "freezes": its lock vanishes and the run never returns. The start count moves on
      // too, as when another replica started the run meanwhile: a lock that merely expired is taken back.
      run: async (jobId: string) => {
        const key = `${prefix}:${AGENT_RUNS_QUEUE}:${jobId}`;
        await redis.multi().del(`${key}:lock`).hincrby(key, 'ats', 1).exec();
        return new Promise<void>((resolve) => hung.push(resolve));
      },
      giveUp: async (jobId: string, reason: string) => gaveUp({ jobId, reason }),
    } as unknown as JobRunner;
    // Its runs never park, so the input store is never asked.
    const inputs = {} as InputStore;
    const consumer = new AgentRunConsumer(
      runner,
      redisStore(redis, prefix),
      config,
      env,
      pino({ level: 'silent' }),
      inputs,
    );
    consumer.onApplicationBootstrap();
    try {
      await runs.enqueue('job_stalls');
      // 11 stalls at a 250 ms stalled interval take a few seconds; far less than this.
      const noGiveUp = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the failed run was never given up')), 30_000).unref(),
      );
      expect(await Promise.race([givenUp, noGiveUp])).toEqual({
        jobId: 'job_stalls',
        reason: expect.stringMatching(/stalled/),
      });
      expect(await runs.queue.getJobState('job_stalls')).toBe('failed');
      expect(hung.length).toBeGreaterThan(1);
    } finally {
      for (const release of hung) release();
      await consumer.onModuleDestroy();
      await runs.onModuleDestroy();
    }
  });
});
