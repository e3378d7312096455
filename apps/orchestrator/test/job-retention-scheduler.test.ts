import { randomUUID } from 'node:crypto';
import { parseConfig, redisStore } from '@switchyard/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { JobDeletion } from '../src/jobs/job-deletion.ts';
import { JOB_RETENTION_QUEUE, JobRetention } from '../src/jobs/job-retention.ts';
import type { JobStore } from '../src/jobs/job-store.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `sy-test-retention-${randomUUID().slice(0, 8)}`;
const reader = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  const keys = await reader.keys(`${prefix}:*`);
  if (keys.length > 0) await reader.del(...keys);
  await reader.quit();
});

/** A Redis that lost its data forgets the sweep scheduler; a replica's reconnect schedules it again. */
describe('job-retention scheduler', () => {
  it('is upserted again after a reconnect when Redis no longer has it', { timeout: 30_000 }, async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    // Sweeps an hour apart: the periodic check (60 s) never runs in this test, only the reconnect.
    const config = parseConfig({ servers: {}, orchestrator: { retentionSweepMs: 3_600_000 } });
    const store = { endedBefore: async () => [] } as unknown as JobStore;
    const retention = new JobRetention(
      store,
      {} as JobDeletion,
      redisStore(redis, prefix),
      config,
      pino({ level: 'silent' }),
    );
    const queue = new Queue(JOB_RETENTION_QUEUE, { connection: reader, prefix });
    try {
      await retention.onApplicationBootstrap();
      expect(await queue.getJobScheduler('delete-expired-jobs')).toBeDefined();
      // The data loss: every key of the deployment goes.
      const keys = await reader.keys(`${prefix}:*`);
      await reader.del(...keys);
      expect(await queue.getJobScheduler('delete-expired-jobs')).toBeUndefined();
      redis.disconnect(true);
      await vi.waitFor(
        async () =>
          expect(await queue.getJobScheduler('delete-expired-jobs')).toMatchObject({ every: 3_600_000 }),
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await retention.onModuleDestroy();
      await queue.close();
      redis.disconnect();
    }
  });
});
