import {
  redisKeys,
  type ToolCallJob,
  type ToolCallOutcome,
  type WorkerHeartbeat,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';

/**
 * Suites that drive the dispatcher against a plain BullMQ Worker (no MCP session) stand in for a tool
 * worker: this heartbeat makes the dispatcher count the server as served, and `okOutcome` is the
 * outcome such a worker returns.
 */
export const STAND_IN_WORKER_ID = 'quiet-worker';

export async function announceStandInWorker(
  redis: Redis,
  prefix: string,
  server: string,
  ttlMs = 600_000,
): Promise<void> {
  const now = Date.now();
  const beat: WorkerHeartbeat = {
    workerId: STAND_IN_WORKER_ID,
    host: 'test',
    pid: 1,
    startedAt: now,
    beatAt: now,
    expiresAt: now + ttlMs,
    sessions: { [server]: { state: 'ready', since: 0, connects: 1 } },
  };
  await redis.hset(redisKeys.workers(prefix), beat.workerId, JSON.stringify(beat));
}

export function okOutcome(job: Job<ToolCallJob>, text = 'ran'): ToolCallOutcome {
  return {
    status: 'ok',
    executed: 'yes',
    attempts: 1,
    server: job.data.server,
    tool: job.data.tool,
    jobId: job.data.jobId,
    toolCallId: job.data.toolCallId,
    workerId: STAND_IN_WORKER_ID,
    queuedMs: 0,
    runMs: 0,
    text,
    content: [],
    truncated: false,
    finishedAt: Date.now(),
  };
}
