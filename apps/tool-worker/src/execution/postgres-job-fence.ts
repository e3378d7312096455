import {
  type AttemptRecord,
  AttemptRecordSchema,
  type LockedQueue,
  type LockHold,
} from '@switchyard/contracts';
import type { Job } from 'bullmq';
import type pg from 'pg';
import { z } from 'zod';
import type { FenceResult, JobFence } from './job-fence.ts';
import { ATTEMPTS_FIELD, fenceResult, lockMayHaveExpired } from './job-fence-common.ts';

/**
 * Which rows a fenced write may touch: the job's own, while it is active under this worker's lock token.
 * Every hand-over to another owner clears or replaces `lock_token` in one row write (BullMQ's stalled
 * sweep, then move_to_active), and PostgreSQL orders that write and ours on the row lock, re-checking
 * this condition on the version it meets (docs/postgres-backend.md §3). $1 queue, $2 job id, $3 token.
 */
const OURS = `queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3`;

/**
 * The fence: one statement writes the marker (when $4 is not null) and extends the lock only while the
 * row is ours and carries no marker; the outer SELECT says which check failed. $4 marker (jsonb, or null
 * for the lock-only check of an idempotent call), $5 lock duration ms, $6 now on this process's clock
 * (BullMQ's PG backend stamps its locks with it). `stalled_marked = false` drops the stalled check's mark,
 * as Redis's `SREM stalled` does. Result: 1 fenced, 2 a marker already there, 0 not our lock. Proven
 * against BullMQ's own stalled handling by test/spikes/postgres-fence.test.ts.
 */
const FENCE_SEND_SQL = `
WITH fenced AS (
  UPDATE job
     SET progress = COALESCE($4::jsonb, progress),
         locked_until_ms = $6::bigint + $5::bigint,
         stalled_marked = false
   WHERE ${OURS}
     AND ($4::jsonb IS NULL
          OR NOT COALESCE(jsonb_typeof(progress) = 'object' AND progress ? 'dispatchedBy', false))
  RETURNING 1
)
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM fenced) THEN 1
  WHEN EXISTS (SELECT 1 FROM job WHERE ${OURS}) THEN 2
  ELSE 0
END AS result`;

/** Clears our marker (the progress Redis's unmark writes: `{}`). */
const UNMARK_SQL = `UPDATE job SET progress = '{}'::jsonb WHERE ${OURS}`;

/** Replaces the marker with one carrying a task handle. $4 marker. */
const RECORD_TASK_SQL = `UPDATE job SET progress = $4::jsonb WHERE ${OURS}`;

/**
 * The attempt log goes into the job's data under its own key: PG's job row has no free-form fields, and
 * `data` survives a retry's move to failed/delayed and is written by nobody else. The job data schema
 * (ToolCallJobSchema, a non-strict object) drops the key when a call is parsed. $4 attempts (jsonb).
 */
const RECORD_ATTEMPTS_SQL = `
UPDATE job SET data = jsonb_set(data, '{${ATTEMPTS_FIELD}}', $4::jsonb) WHERE ${OURS}`;

/** What recordAttempts wrote, whoever holds the job now. $1 queue, $2 job id. */
const EARLIER_ATTEMPTS_SQL = `
SELECT data -> '${ATTEMPTS_FIELD}' AS attempts FROM job WHERE queue = $1 AND id = $2`;

/**
 * The fence on PostgreSQL (job-fence.ts): each method is one statement on the job's row in BullMQ's
 * `job` table of the queue schema (the pool's search_path).
 */
export class PostgresJobFence implements JobFence {
  constructor(
    private readonly pool: pg.Pool,
    private readonly queue: LockedQueue,
    private readonly lockDurationMs: number,
    /** The same queue's LockHold (lock-take-back.ts): the hold is the fence's UPDATE without a marker. */
    private readonly lock: LockHold,
  ) {}

  async beforeSend(job: Job, token: string, marker: object | undefined): Promise<FenceResult> {
    const { rows } = await this.pool.query<{ result: number }>(FENCE_SEND_SQL, [
      this.queue.name,
      String(job.id),
      token,
      marker ? JSON.stringify(marker) : null,
      this.lockDurationMs,
      Date.now(),
    ]);
    return fenceResult(rows[0]?.result ?? 0);
  }

  unmark(job: Job, token: string): Promise<boolean> {
    return this.write(UNMARK_SQL, job, token);
  }

  recordTask(job: Job, token: string, marker: object): Promise<boolean> {
    return this.write(RECORD_TASK_SQL, job, token, JSON.stringify(marker));
  }

  recordAttempts(job: Job, token: string, attempts: AttemptRecord[]): Promise<boolean> {
    return this.write(RECORD_ATTEMPTS_SQL, job, token, JSON.stringify(attempts));
  }

  async earlierAttempts(job: Job): Promise<AttemptRecord[]> {
    const { rows } = await this.pool.query<{ attempts: unknown }>(EARLIER_ATTEMPTS_SQL, [
      this.queue.name,
      String(job.id),
    ]);
    return z
      .array(AttemptRecordSchema)
      .catch([])
      .parse(rows[0]?.attempts ?? []);
  }

  hold(job: Job, token: string): Promise<boolean> {
    return this.lock.hold(
      { id: String(job.id), attemptsStarted: job.attemptsStarted, token },
      this.lockDurationMs,
    );
  }

  mayHaveExpired(since: number | undefined): boolean {
    return lockMayHaveExpired(since, this.lockDurationMs);
  }

  /** One fenced UPDATE: true when it found the row ours (and wrote). */
  private async write(sql: string, job: Job, token: string, value?: string): Promise<boolean> {
    const params = [this.queue.name, String(job.id), token];
    const { rowCount } = await this.pool.query(sql, value === undefined ? params : [...params, value]);
    return rowCount === 1;
  }
}
