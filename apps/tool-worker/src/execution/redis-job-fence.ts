import {
  type AttemptRecord,
  AttemptRecordSchema,
  holdJobLock,
  type QueueKeys,
  type RedisConnection,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { Cluster } from 'ioredis';
import { z } from 'zod';
import type { FenceResult, JobFence } from './job-fence.ts';
import { ATTEMPTS_FIELD, fenceResult, lockMayHaveExpired } from './job-fence-common.ts';
import type { ReplicaWait } from './replica-wait.ts';

/**
 * The fence on Redis (job-fence.ts): the job hash and its lock share the queue's {hash tag}, so one
 * script sees both.
 *
 * Returns 1 (fenced: send), 0 (the lock is not ours: do not send), 2 (a marker exists: the call was
 * already sent by someone, do not send again). ARGV[3] empty = check the lock only (idempotent calls).
 * The lock is extended on success, so its expiry is at least a lock duration after this ran.
 */
const FENCE_SEND = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[3] ~= '' then
  local progress = redis.call('HGET', KEYS[1], 'progress')
  if progress then
    local ok, decoded = pcall(cjson.decode, progress)
    if ok and type(decoded) == 'table' and decoded['dispatchedBy'] then return 2 end
  end
  redis.call('HSET', KEYS[1], 'progress', ARGV[3])
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`;

/** Clears the marker of a call that turned out not to be sent, only while the lock is still ours. */
const UNMARK = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', '{}')
return 1
`;

/**
 * Writes the marker with a task handle (docs/semantics.md §12), only while the lock is ours: a worker
 * that lost the job must not overwrite what its new owner recorded.
 */
const RECORD_TASK = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
`;

/**
 * Records the attempts of a call that is about to be retried (docs/semantics.md §5) in a field of the
 * job's own hash, only while the lock is ours: BullMQ's moveToFailed keeps the hash, and a worker that
 * lost the job must not write into its new owner's record.
 */
const RECORD_ATTEMPTS = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], '${ATTEMPTS_FIELD}', ARGV[2])
return 1
`;

type FencedRedis = RedisConnection & {
  switchyardRecordAttempts(jobKey: string, lockKey: string, token: string, attempts: string): Promise<number>;
  switchyardRecordTask(jobKey: string, lockKey: string, token: string, marker: string): Promise<number>;
  switchyardUnmark(jobKey: string, lockKey: string, token: string): Promise<number>;
  switchyardFenceSend(
    jobKey: string,
    lockKey: string,
    token: string,
    ms: number,
    marker: string,
  ): Promise<number>;
};

/** The fence script and WAIT queued together: one round trip, on one connection (see beforeSend). */
interface FencePipeline {
  eval(script: string, numberOfKeys: 2, ...args: Array<string | number>): this;
  wait(replicas: number, timeoutMs: number): this;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

export class RedisJobFence implements JobFence {
  private readonly redis: FencedRedis;
  /** The hash slot of this queue's keys (one {hash tag}), asked once, on a cluster only. */
  private slot: Promise<number> | undefined;

  constructor(
    redis: RedisConnection,
    private readonly keys: QueueKeys,
    private readonly lockDurationMs: number,
    /** Replicas that must confirm a marker before the call is sent; none when absent. */
    private readonly replicaWait?: ReplicaWait,
  ) {
    // defineCommand: EVALSHA with a fallback to EVAL, one round trip per call.
    if (!('switchyardFenceSend' in redis)) {
      redis.defineCommand('switchyardFenceSend', { numberOfKeys: 2, lua: FENCE_SEND });
      redis.defineCommand('switchyardUnmark', { numberOfKeys: 2, lua: UNMARK });
      redis.defineCommand('switchyardRecordTask', { numberOfKeys: 2, lua: RECORD_TASK });
      redis.defineCommand('switchyardRecordAttempts', { numberOfKeys: 2, lua: RECORD_ATTEMPTS });
    }
    this.redis = redis as FencedRedis;
  }

  /**
   * One round trip: the lock is ours, and (with a marker) no marker existed and ours is now written —
   * and, when replicas are to be waited for, that many replicas have it (WAIT).
   *
   * The WAIT goes in one pipeline with the script, so it runs on the very connection that wrote the
   * marker (WAIT counts the writes of its own client connection; on a cluster, the pipeline goes to the
   * node of the queue's slot, keyless WAIT included). That connection is the worker's shared one: WAIT
   * covers every earlier write of it too, which is harmless, and holds up its later commands (BullMQ's
   * lock renewals among them) until the replicas answered — at once when they keep up, at most the
   * WAIT timeout (capped at a quarter of the lock) when they are behind.
   */
  async beforeSend(job: Job, token: string, marker: object | undefined): Promise<FenceResult> {
    const id = String(job.id);
    const key = this.keys.jobKey(id);
    const args = [
      key,
      `${key}:lock`,
      token,
      this.lockDurationMs,
      marker ? JSON.stringify(marker) : '',
    ] as const;
    const wait = marker && this.replicaWait && !this.replicaWait.disabled ? this.replicaWait : undefined;
    const required = wait ? await wait.required(await this.node()) : 0;
    if (!wait || required === 0) {
      return fenceResult(await this.redis.switchyardFenceSend(...args));
    }
    const { timeoutMs } = wait;
    const replies = await (this.redis.pipeline() as unknown as FencePipeline)
      // EVAL, not the defined command's EVALSHA: after a NOSCRIPT ioredis resends that one outside the
      // pipeline, behind the WAIT, which would then not cover the marker.
      .eval(FENCE_SEND, 2, ...args)
      .wait(required, timeoutMs)
      .exec();
    const [fenceError, fenced] = replies?.[0] ?? [new Error('no reply to the fence script'), 0];
    if (fenceError) throw fenceError;
    const result = fenceResult(fenced as number);
    if (result !== 'fenced') return result;
    // A WAIT that failed (the connection dropped and it went to another primary, a replica answered it)
    // confirmed nothing.
    const [waitError, acked] = replies?.[1] ?? [null, 0];
    const confirmed = waitError ? 0 : Number(acked);
    if (confirmed >= required) return 'fenced';
    wait.recheck();
    if (!(await this.unmark(job, token))) return 'lock_lost';
    return { unreplicated: { acked: confirmed, required, timeoutMs } };
  }

  /** The primary (`host:port`) that holds this queue's keys on a cluster; undefined for a single server. */
  private async node(): Promise<string | undefined> {
    const redis = this.redis as RedisConnection;
    if (!(redis instanceof Cluster)) return undefined;
    this.slot ??= redis.cluster('KEYSLOT', this.keys.active) as Promise<number>;
    const slot = await this.slot.catch((error: unknown) => {
      this.slot = undefined;
      throw error;
    });
    return redis.slots[slot]?.[0];
  }

  /**
   * Takes back our marker when the call was not sent after all (the session went away between the
   * fence and the send), so the job may go back on the queue. A lock no longer ours leaves it alone: the
   * marker may be the new owner's.
   */
  async unmark(job: Job, token: string): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (await this.redis.switchyardUnmark(key, `${key}:lock`, token)) === 1;
  }

  /** Records a task handle in the job's marker; false when the lock is no longer ours. */
  async recordTask(job: Job, token: string, marker: object): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (await this.redis.switchyardRecordTask(key, `${key}:lock`, token, JSON.stringify(marker))) === 1;
  }

  /**
   * Writes the records of every attempt so far before a retry is asked for; false when the lock is no
   * longer ours (nothing written). One round trip, on the retry path only.
   */
  async recordAttempts(job: Job, token: string, attempts: AttemptRecord[]): Promise<boolean> {
    const key = this.keys.jobKey(String(job.id));
    return (
      (await this.redis.switchyardRecordAttempts(key, `${key}:lock`, token, JSON.stringify(attempts))) === 1
    );
  }

  /**
   * The records a previous attempt wrote (recordAttempts); [] when there are none or they are
   * unreadable (an outcome without them is still true). One round trip, for a retried call only.
   */
  async earlierAttempts(job: Job): Promise<AttemptRecord[]> {
    const raw = await this.redis.hget(this.keys.jobKey(String(job.id)), ATTEMPTS_FIELD);
    if (!raw) return [];
    try {
      return z.array(AttemptRecordSchema).catch([]).parse(JSON.parse(raw));
    } catch {
      return [];
    }
  }

  /** One round trip: true when the job is still this worker's (its lock kept or re-taken). */
  hold(job: Job, token: string): Promise<boolean> {
    return holdJobLock(
      this.redis,
      this.keys,
      { id: String(job.id), attemptsStarted: job.attemptsStarted, token },
      this.lockDurationMs,
    );
  }

  mayHaveExpired(since: number | undefined): boolean {
    return lockMayHaveExpired(since, this.lockDurationMs);
  }
}
