import { Inject, Injectable } from '@nestjs/common';
import { safeJson, storedOutcome, type ToolCallOutcome, ToolCallOutcomeSchema } from '@switchyard/contracts';
import type pg from 'pg';
import { PG_POOL } from '../runtime/tokens.ts';
import type { JobListFilter } from './job-list-query.ts';
import { type EndStatus, FINAL_STATUSES, type JobStatus, type StoredJobRequest } from './job-request.ts';

/** Events read per query when a stream catches up. */
export const EVENT_PAGE_SIZE = 1000;

export interface JobRecord {
  id: string;
  team: string;
  kind: 'agent' | 'batch' | 'mcp';
  status: JobStatus;
  request: StoredJobRequest;
  result: unknown;
  error: string | null;
  traceId: string;
  traceparent: string;
  idempotencyKey: string | null;
  /** sha256 of the submitted request (request-digest.ts); null for jobs stored before it was kept. */
  requestDigest: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Where a call without an outcome stands (docs/semantics.md §17): known but not sent (refused or
 * cancelled before it was, for a moment), waiting for a person's approval, waiting for the answer to the
 * tool's question, or on its server's queue (queued or running). Once it has an outcome, its status is
 * the outcome's.
 */
export const OPEN_CALL_STATES = ['admitted', 'awaiting_approval', 'awaiting_input', 'dispatched'] as const;
export type OpenCallState = (typeof OPEN_CALL_STATES)[number];

export interface ToolCallRecord {
  jobId: string;
  toolCallId: string;
  position: number;
  modelTool: string;
  server: string | null;
  tool: string | null;
  arguments: Record<string, unknown>;
  status: string;
  /** Parsed, so `text` is there although the row stores it only when the content cannot give it. */
  outcome: ToolCallOutcome | null;
  dispatchedAt: Date;
  finishedAt: Date | null;
  /**
   * The Redis epoch of the call's queue slot when it was last recorded `dispatched` (redisKeys.epoch);
   * null before that, or for calls recorded before epochs were kept.
   */
  redisEpoch: string | null;
}

export interface JobEventRecord {
  id: number;
  jobId: string;
  type: string;
  data: Record<string, unknown>;
  at: Date;
}

export class ConcurrencyLimitError extends Error {
  constructor(
    readonly team: string,
    readonly limit: number,
  ) {
    super(`team ${team} already has ${limit} jobs queued or running (teams.${team}.maxConcurrentJobs)`);
  }
}

/** A tool_calls row as PostgreSQL returns it: the outcome in its stored form. */
type ToolCallRow = Omit<ToolCallRecord, 'outcome'> & { outcome: unknown };

/** Every reader of a stored outcome goes through the schema, which derives the model text. */
function toolCallRecord(row: ToolCallRow): ToolCallRecord {
  if (row.outcome === null) return { ...row, outcome: null };
  const parsed = ToolCallOutcomeSchema.safeParse(row.outcome);
  if (!parsed.success) {
    throw new Error(
      `stored outcome of tool call ${row.toolCallId} of job ${row.jobId} is unreadable: ${parsed.error.message}`,
    );
  }
  return { ...row, outcome: parsed.data };
}

/** JSON for a jsonb column: text PostgreSQL refuses (NUL, lone surrogates) becomes U+FFFD. */
const jsonb = (value: unknown): string => JSON.stringify(safeJson(value));

const JOB_COLUMNS = `id, team, kind, status, request, result, error, trace_id AS "traceId", traceparent,
  idempotency_key AS "idempotencyKey", request_digest AS "requestDigest", created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt"`;
const TOOL_CALL_COLUMNS = `job_id AS "jobId", tool_call_id AS "toolCallId", position, model_tool AS "modelTool", server,
  tool, arguments, status, outcome, dispatched_at AS "dispatchedAt", finished_at AS "finishedAt", redis_epoch AS "redisEpoch"`;

/** Jobs, their tool calls and their events in PostgreSQL: the durable record the API serves from. */
@Injectable()
export class JobStore {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /**
   * Inserts a job unless the team already has one with this idempotency key (then returns that one),
   * refusing when the team is at its concurrent-job limit. The team lock makes count-then-insert atomic.
   */
  async create(
    job: Pick<
      JobRecord,
      'id' | 'team' | 'kind' | 'request' | 'traceId' | 'traceparent' | 'idempotencyKey' | 'requestDigest'
    >,
    maxConcurrent: number,
  ): Promise<{ job: JobRecord; created: boolean }> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`switchyard-team:${job.team}`]);
      if (job.idempotencyKey) {
        const existing = await client.query<JobRecord>(
          `SELECT ${JOB_COLUMNS} FROM jobs WHERE team = $1 AND idempotency_key = $2`,
          [job.team, job.idempotencyKey],
        );
        if (existing.rows[0]) {
          await client.query('COMMIT');
          return { job: existing.rows[0], created: false };
        }
      }
      const active = await client.query<{ count: string }>(
        `SELECT count(*) FROM jobs WHERE team = $1 AND status IN ('queued', 'running')`,
        [job.team],
      );
      if (Number(active.rows[0]?.count ?? 0) >= maxConcurrent)
        throw new ConcurrencyLimitError(job.team, maxConcurrent);
      const inserted = await client.query<JobRecord>(
        `INSERT INTO jobs (id, team, kind, status, request, trace_id, traceparent, idempotency_key, request_digest)
         VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8) RETURNING ${JOB_COLUMNS}`,
        [
          job.id,
          job.team,
          job.kind,
          jsonb(job.request),
          job.traceId,
          job.traceparent,
          job.idempotencyKey,
          job.requestDigest,
        ],
      );
      await client.query('COMMIT');
      return { job: inserted.rows[0] as JobRecord, created: true };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async get(id: string): Promise<JobRecord | undefined> {
    return (await this.pool.query<JobRecord>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id])).rows[0];
  }

  /** Another team's job does not exist, as far as this team can tell. */
  async getForTeam(id: string, team: string): Promise<JobRecord | undefined> {
    const job = await this.get(id);
    return job?.team === team ? job : undefined;
  }

  /**
   * A team's jobs (`team`), or every team's (undefined: an operator), newest first, one page after
   * `filter.after` (keyset on created_at, id, served by the jobs_team_created and jobs_created
   * indexes). Returns one more row than the limit when another page follows.
   */
  async list(
    team: string | undefined,
    filter: JobListFilter,
  ): Promise<Array<JobRecord & { cursorAt: string }>> {
    const where = ['true'];
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    if (team !== undefined) where.push(`team = ${param(team)}`);
    if (filter.statuses) where.push(`status = ANY(${param(filter.statuses)})`);
    if (filter.kind) where.push(`kind = ${param(filter.kind)}`);
    if (Object.keys(filter.metadata).length > 0)
      where.push(`request -> 'metadata' @> ${param(JSON.stringify(filter.metadata))}::jsonb`);
    if (filter.createdAfter) where.push(`created_at > ${param(filter.createdAfter)}::timestamptz`);
    if (filter.createdBefore) where.push(`created_at < ${param(filter.createdBefore)}::timestamptz`);
    if (filter.after)
      where.push(
        `(created_at, id) < (${param(filter.after.createdAt)}::timestamptz, ${param(filter.after.id)})`,
      );
    const result = await this.pool.query<JobRecord & { cursorAt: string }>(
      `SELECT ${JOB_COLUMNS}, created_at::text AS "cursorAt" FROM jobs WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit + 1)}`,
      params,
    );
    return result.rows;
  }

  /**
   * Deletes a team's job that has ended, with its tool calls and events (ON DELETE CASCADE). Returns
   * the status it found when the job has not ended (nothing deleted), or undefined when there is none.
   */
  async deleteFinished(id: string, team: string): Promise<'deleted' | JobStatus | undefined> {
    const deleted = await this.pool.query(
      `DELETE FROM jobs WHERE id = $1 AND team = $2 AND status = ANY($3)`,
      [id, team, [...FINAL_STATUSES]],
    );
    if ((deleted.rowCount ?? 0) > 0) return 'deleted';
    return (await this.getForTeam(id, team))?.status;
  }

  /** Jobs that ended before `cutoff`, oldest first, at most `limit` of them. */
  async endedBefore(cutoff: Date, limit: number): Promise<string[]> {
    const result = await this.pool.query<{ id: string }>(
      `SELECT id FROM jobs WHERE finished_at < $1 AND status = ANY($2) ORDER BY finished_at LIMIT $3`,
      [cutoff, [...FINAL_STATUSES], limit],
    );
    return result.rows.map((row) => row.id);
  }

  /** Deletes ended jobs by id (retention); returns how many went. */
  async deleteEnded(ids: string[]): Promise<number> {
    const deleted = await this.pool.query('DELETE FROM jobs WHERE id = ANY($1) AND status = ANY($2)', [
      ids,
      [...FINAL_STATUSES],
    ]);
    return deleted.rowCount ?? 0;
  }

  /**
   * queued|running|input_required → running (a parked run wakes up to look again); returns undefined
   * when the job already ended (e.g. cancelled). With an event, the event is stored by the same statement
   * and only when the job was moved (one round trip per run start instead of two).
   */
  async markRunning(id: string, event?: StoredEventInput): Promise<JobRecord | undefined> {
    const update = `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now())
       WHERE id = $1 AND status IN ('queued', 'running', 'input_required') RETURNING ${JOB_COLUMNS}`;
    const result = await this.pool.query<JobRecord>(
      event
        ? `WITH started AS (${update}),
             stored AS (INSERT INTO job_events (job_id, type, data) SELECT id, $2, $3 FROM started)
           SELECT * FROM started`
        : update,
      [id, ...eventParams(event)],
    );
    return result.rows[0];
  }

  /**
   * Ends a job that has not ended yet, storing its final status event in the same statement: a job is
   * never final without the event that says so (a stream follower would wait for it forever). False
   * when it had already ended (a cancel won the race); then no event is stored.
   */
  async finish(
    id: string,
    status: EndStatus,
    result: unknown,
    error: string | undefined,
    event: StoredEventInput,
  ): Promise<boolean> {
    const ended = await this.pool.query(
      endedWithEvent(
        `UPDATE jobs SET status = $2, result = $3, error = $4, finished_at = now()
         WHERE id = $1 AND status IN ('queued', 'running', 'input_required')`,
        5,
      ),
      [id, status, result === undefined ? null : jsonb(result), error ?? null, ...eventParams(event)],
    );
    return (ended.rowCount ?? 0) > 0;
  }

  /** As finish, for a cancel by request. */
  async cancel(id: string, event: StoredEventInput): Promise<boolean> {
    const ended = await this.pool.query(
      endedWithEvent(
        `UPDATE jobs SET status = 'cancelled', finished_at = now(), error = 'cancelled by request'
         WHERE id = $1 AND status IN ('queued', 'running', 'input_required')`,
        2,
      ),
      [id, ...eventParams(event)],
    );
    return (ended.rowCount ?? 0) > 0;
  }

  async toolCalls(jobId: string): Promise<ToolCallRecord[]> {
    const result = await this.pool.query<ToolCallRow>(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = $1 ORDER BY position, tool_call_id`,
      [jobId],
    );
    return result.rows.map(toolCallRecord);
  }

  async toolCall(jobId: string, toolCallId: string): Promise<ToolCallRecord | undefined> {
    const result = await this.pool.query<ToolCallRow>(
      `SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = $1 AND tool_call_id = $2`,
      [jobId, toolCallId],
    );
    const row = result.rows[0];
    return row ? toolCallRecord(row) : undefined;
  }

  /**
   * Records a call without an outcome in `state` (docs/semantics.md §17): `admitted` (known, not sent),
   * `awaiting_approval`, `awaiting_input` or `dispatched` (on its server's queue). The first record keeps
   * its position, names and arguments; a later one only moves the state of a call that has no outcome.
   * With an event, the event is stored by the same statement and only when the state changed, so a re-run
   * of the same call (a resumed run, a retried /mcp request) never announces it twice.
   * `redisEpoch` (with `dispatched`) is the epoch of the call's queue slot, read before its add: stored by
   * the same statement, and kept as it was when the call was already `dispatched` (a re-dispatch must
   * compare against the epoch of the first add, docs/semantics.md §18).
   */
  async recordCall(
    call: Omit<ToolCallRecord, 'status' | 'outcome' | 'dispatchedAt' | 'finishedAt' | 'redisEpoch'>,
    state: OpenCallState,
    event?: StoredEventInput,
    redisEpoch?: string | null,
  ): Promise<boolean> {
    const upsert = `INSERT INTO tool_calls (job_id, tool_call_id, position, model_tool, server, tool, arguments, status, redis_epoch)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $8 = 'dispatched' THEN $9::text END)
         ON CONFLICT (job_id, tool_call_id) DO UPDATE SET status = EXCLUDED.status,
           dispatched_at = CASE WHEN EXCLUDED.status = 'dispatched' THEN now() ELSE tool_calls.dispatched_at END,
           redis_epoch = CASE WHEN EXCLUDED.status = 'dispatched' THEN EXCLUDED.redis_epoch ELSE tool_calls.redis_epoch END
         WHERE tool_calls.outcome IS NULL AND tool_calls.status <> EXCLUDED.status`;
    const result = await this.pool.query(
      event
        ? `WITH recorded AS (${upsert} RETURNING job_id)
           INSERT INTO job_events (job_id, type, data) SELECT job_id, $10, $11 FROM recorded`
        : upsert,
      [
        call.jobId,
        call.toolCallId,
        call.position,
        call.modelTool,
        call.server,
        call.tool,
        jsonb(call.arguments),
        state,
        redisEpoch ?? null,
        ...eventParams(event),
      ],
    );
    // Rows inserted or moved (without an event), or events stored (with one): 0 when nothing changed.
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Stores a call's one outcome, in its stored form (no second copy of a result's text); the first wins.
   * With an event, as recordCall.
   */
  async recordOutcome(
    jobId: string,
    toolCallId: string,
    outcome: ToolCallOutcome,
    event?: StoredEventInput,
  ): Promise<void> {
    await this.pool.query(
      withEvent(
        `UPDATE tool_calls SET status = $3, outcome = $4, finished_at = now()
         WHERE job_id = $1 AND tool_call_id = $2 AND outcome IS NULL`,
        5,
        event,
      ),
      [jobId, toolCallId, outcome.status, jsonb(storedOutcome(outcome)), ...eventParams(event)],
    );
  }

  /**
   * Open jobs of kind `mcp` whose one call has no outcome and that started over `olderThanSeconds` ago,
   * with where the call stands: the candidates a replica whose client left behind (docs/semantics.md §16).
   */
  async openGatewayCalls(
    callId: string,
    olderThanSeconds: number,
  ): Promise<Array<{ id: string; server: string | null; callStatus: string }>> {
    const { rows } = await this.pool.query<{ id: string; server: string | null; callStatus: string }>(
      `SELECT j.id, c.server, c.status AS "callStatus" FROM jobs j
         JOIN tool_calls c ON c.job_id = j.id AND c.tool_call_id = $1
        WHERE j.kind = 'mcp' AND j.status IN ('queued', 'running', 'input_required') AND c.outcome IS NULL
          AND j.started_at < now() - make_interval(secs => $2) ORDER BY j.started_at LIMIT 100`,
      [callId, olderThanSeconds],
    );
    return rows;
  }

  /**
   * Stores a call's latest `tool_call.progress` event in place of its previous one (docs/semantics.md,
   * *Events*): a reconnecting watcher replays the newest progress of each running call, and a chatty
   * server leaves one row per call, not one per notification. Stored only while the call has no outcome,
   * so progress never follows its call's `tool_call.finished`. False when nothing was stored.
   */
  async replaceCallProgress(jobId: string, toolCallId: string, event: StoredEventInput): Promise<boolean> {
    const result = await this.pool.query(
      `WITH open AS (
         SELECT job_id FROM tool_calls WHERE job_id = $1 AND tool_call_id = $2 AND outcome IS NULL
       ), superseded AS (
         DELETE FROM job_events WHERE job_id IN (SELECT job_id FROM open) AND type = $3 AND data->>'toolCallId' = $2
       )
       INSERT INTO job_events (job_id, type, data) SELECT job_id, $3, $4 FROM open`,
      [jobId, toolCallId, event.type, jsonb(event.data)],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async appendEvent(jobId: string, type: string, data: Record<string, unknown>): Promise<number> {
    const result = await this.pool.query<{ id: string }>(
      'INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3) RETURNING id',
      [jobId, type, jsonb(data)],
    );
    return Number(result.rows[0]?.id);
  }

  /** At most EVENT_PAGE_SIZE events: a shorter page is everything stored so far. */
  async eventsAfter(jobId: string, afterId: number): Promise<JobEventRecord[]> {
    const result = await this.pool.query<JobEventRecord & { id: string }>(
      `SELECT id, job_id AS "jobId", type, data, at FROM job_events WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT ${EVENT_PAGE_SIZE}`,
      [jobId, afterId],
    );
    return result.rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  /** The id of the job's newest stored event, 0 when it has none. */
  async newestEventId(jobId: string): Promise<number> {
    const result = await this.pool.query<{ newest: string }>(
      'SELECT coalesce(max(id), 0) AS newest FROM job_events WHERE job_id = $1',
      [jobId],
    );
    return Number(result.rows[0]?.newest ?? 0);
  }
}

/** An event stored together with another write: its job is that write's job ($1). */
export interface StoredEventInput {
  type: string;
  data: Record<string, unknown>;
}

/** `statement` with the event's insert in the same statement; `next` is the event's first parameter. */
function withEvent(statement: string, next: number, event: StoredEventInput | undefined): string {
  if (!event) return statement;
  return `WITH recorded AS (${statement})
    INSERT INTO job_events (job_id, type, data) VALUES ($1, $${next}, $${next + 1})`;
}

/**
 * `update` of one job and, only when it changed the row, the event: one statement, so the change is
 * never stored without its event nor the event without the change. The row count is the update's.
 */
function endedWithEvent(update: string, next: number): string {
  return `WITH ended AS (${update} RETURNING id)
    INSERT INTO job_events (job_id, type, data) SELECT id, $${next}, $${next + 1} FROM ended`;
}

function eventParams(event: StoredEventInput | undefined): unknown[] {
  return event ? [event.type, jsonb(event.data)] : [];
}
