import { Inject, Injectable } from '@nestjs/common';
import { safeJson, storedOutcome, type ToolCallOutcome, ToolCallOutcomeSchema } from '@switchyard/contracts';
import type pg from 'pg';
import { PG_POOL } from '../runtime/tokens.ts';
import type { JobRequest, JobStatus } from './job-request.ts';

export interface JobRecord {
  id: string;
  team: string;
  kind: 'agent' | 'batch';
  status: JobStatus;
  request: JobRequest;
  result: unknown;
  error: string | null;
  traceId: string;
  traceparent: string;
  idempotencyKey: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

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
  idempotency_key AS "idempotencyKey", created_at AS "createdAt", started_at AS "startedAt", finished_at AS "finishedAt"`;
const TOOL_CALL_COLUMNS = `job_id AS "jobId", tool_call_id AS "toolCallId", position, model_tool AS "modelTool", server,
  tool, arguments, status, outcome, dispatched_at AS "dispatchedAt", finished_at AS "finishedAt"`;

/** Jobs, their tool calls and their events in PostgreSQL: the durable record the API serves from. */
@Injectable()
export class JobStore {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /**
   * Inserts a job unless the team already has one with this idempotency key (then returns that one),
   * refusing when the team is at its concurrent-job limit. The team lock makes count-then-insert atomic.
   */
  async create(
    job: Pick<JobRecord, 'id' | 'team' | 'kind' | 'request' | 'traceId' | 'traceparent' | 'idempotencyKey'>,
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
        `INSERT INTO jobs (id, team, kind, status, request, trace_id, traceparent, idempotency_key)
         VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7) RETURNING ${JOB_COLUMNS}`,
        [job.id, job.team, job.kind, jsonb(job.request), job.traceId, job.traceparent, job.idempotencyKey],
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

  /** queued|running → running; returns undefined when the job already ended (e.g. cancelled). */
  async markRunning(id: string): Promise<JobRecord | undefined> {
    const result = await this.pool.query<JobRecord>(
      `UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now())
       WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${JOB_COLUMNS}`,
      [id],
    );
    return result.rows[0];
  }

  /** Ends a job that has not ended yet; false when it already had (a cancel won the race). */
  async finish(
    id: string,
    status: 'succeeded' | 'failed',
    result: unknown,
    error?: string,
  ): Promise<boolean> {
    const updated = await this.pool.query(
      `UPDATE jobs SET status = $2, result = $3, error = $4, finished_at = now()
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, status, result === undefined ? null : jsonb(result), error ?? null],
    );
    return (updated.rowCount ?? 0) > 0;
  }

  async cancel(id: string): Promise<boolean> {
    const updated = await this.pool.query(
      `UPDATE jobs SET status = 'cancelled', finished_at = now(), error = 'cancelled by request'
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
    return (updated.rowCount ?? 0) > 0;
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

  /** Records that a call is being dispatched; a re-run of the same call keeps the first record. */
  async recordDispatch(
    call: Omit<ToolCallRecord, 'status' | 'outcome' | 'dispatchedAt' | 'finishedAt'>,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO tool_calls (job_id, tool_call_id, position, model_tool, server, tool, arguments, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'dispatched') ON CONFLICT (job_id, tool_call_id) DO NOTHING`,
      [
        call.jobId,
        call.toolCallId,
        call.position,
        call.modelTool,
        call.server,
        call.tool,
        jsonb(call.arguments),
      ],
    );
  }

  /** Stores a call's one outcome, in its stored form (no second copy of a result's text); the first wins. */
  async recordOutcome(jobId: string, toolCallId: string, outcome: ToolCallOutcome): Promise<void> {
    await this.pool.query(
      `UPDATE tool_calls SET status = $3, outcome = $4, finished_at = now()
       WHERE job_id = $1 AND tool_call_id = $2 AND outcome IS NULL`,
      [jobId, toolCallId, outcome.status, jsonb(storedOutcome(outcome))],
    );
  }

  async appendEvent(jobId: string, type: string, data: Record<string, unknown>): Promise<number> {
    const result = await this.pool.query<{ id: string }>(
      'INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3) RETURNING id',
      [jobId, type, jsonb(data)],
    );
    return Number(result.rows[0]?.id);
  }

  async eventsAfter(jobId: string, afterId: number): Promise<JobEventRecord[]> {
    const result = await this.pool.query<JobEventRecord & { id: string }>(
      `SELECT id, job_id AS "jobId", type, data, at FROM job_events WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT 1000`,
      [jobId, afterId],
    );
    return result.rows.map((row) => ({ ...row, id: Number(row.id) }));
  }
}
