import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '../runtime/tokens.ts';

/** An agent or batch job PostgreSQL shows open, as the reconciler reads it. */
export interface OpenRun {
  id: string;
  status: 'queued' | 'running' | 'input_required';
  /** created_at as PostgreSQL prints it (microseconds kept): the keyset cursor. */
  cursorAt: string;
  /** A parked job's earliest pending expiry: when its run must look again (null: nothing pending). */
  wakeAt: Date | null;
}

export interface RunCursor {
  cursorAt: string;
  id: string;
}

/** The reconciler's SQL: the jobs that should have a `{agent-runs}` entry (served by jobs_open_runs). */
@Injectable()
export class OpenRuns {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /**
   * Open agent and batch jobs (never `mcp`: the /mcp request that made one runs it, no run queue),
   * created over `graceSeconds` ago, oldest first after `after`, at most `limit`.
   */
  async page(after: RunCursor | undefined, graceSeconds: number, limit: number): Promise<OpenRun[]> {
    const params: unknown[] = [graceSeconds, limit];
    const keyset = after
      ? `AND (j.created_at, j.id) > ($${params.push(after.cursorAt)}::timestamptz, $${params.push(after.id)})`
      : '';
    const { rows } = await this.pool.query<OpenRun>(
      `SELECT j.id, j.status, j.created_at::text AS "cursorAt",
              (SELECT min(i.expires_at) FROM tool_call_inputs i
                WHERE i.job_id = j.id AND i.state = 'pending') AS "wakeAt"
         FROM jobs j
        WHERE j.status IN ('queued', 'running', 'input_required') AND j.kind <> 'mcp'
          AND j.created_at < now() - make_interval(secs => $1) ${keyset}
        ORDER BY j.created_at, j.id LIMIT $2`,
      params,
    );
    return rows;
  }

  /** The job's status now (undefined when it is gone). */
  async status(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [id]);
    return rows[0]?.status;
  }
}
