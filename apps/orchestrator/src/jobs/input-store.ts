import { Inject, Injectable } from '@nestjs/common';
import { type Answer, type Question, safeJson } from '@switchyard/contracts';
import type pg from 'pg';
import { PG_POOL } from '../runtime/tokens.ts';

/** What an approval request shows the approver: the exact call, and the digest a decision must name. */
export interface ApprovalRequest {
  arguments: Record<string, unknown>;
  digest: string;
}

export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  digest: string;
  reason?: string;
}

/** One thing a call waits for a person on: an approval before it is sent, or a tool's question. */
export interface InputRecord {
  jobId: string;
  toolCallId: string;
  kind: 'approval' | 'question';
  /** Questions: the dispatch round whose answer this is (the retry `<call>~input-<round>`); approvals: 0. */
  round: number;
  server: string;
  tool: string;
  request: ApprovalRequest | Question;
  expiresAt: Date;
  state: 'pending' | 'answered' | 'expired';
  answer: Answer | ApprovalDecision | null;
  /** Which key decided (label and digest prefix), never the key. */
  decidedBy: string | null;
  decidedAt: Date | null;
  createdAt: Date;
}

export type NewInput = Pick<
  InputRecord,
  'jobId' | 'toolCallId' | 'kind' | 'round' | 'server' | 'tool' | 'request' | 'expiresAt'
>;

/** How an answer attempt ended: refused answers name why (the API maps them to 404/409). */
export type AnswerResult =
  | { ok: true; record: InputRecord; resume: boolean }
  | { ok: false; reason: 'not_found' | 'not_pending' | 'expired'; record?: InputRecord };

const COLUMNS = `job_id AS "jobId", tool_call_id AS "toolCallId", kind, round, server, tool, request,
  expires_at AS "expiresAt", state, answer, decided_by AS "decidedBy", decided_at AS "decidedAt",
  created_at AS "createdAt"`;

/**
 * The questions and approvals of a job's calls (table `tool_call_inputs`), with the job's status moves
 * around them. Waiting and answering lock the job row, so an answer that arrives while the run is
 * parking is never lost: either the run sees it, or the answer sees the parked job and resumes it.
 */
@Injectable()
export class InputStore {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /** Records what a call waits for; a re-run of the same step keeps the first record. */
  async ask(input: NewInput): Promise<InputRecord> {
    await this.pool.query(
      `INSERT INTO tool_call_inputs (job_id, tool_call_id, kind, round, server, tool, request, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [
        input.jobId,
        input.toolCallId,
        input.kind,
        input.round,
        input.server,
        input.tool,
        JSON.stringify(safeJson(input.request)),
        input.expiresAt,
      ],
    );
    const record = await this.get(input.jobId, input.toolCallId, input.kind, input.round);
    if (!record) throw new Error(`input of call ${input.toolCallId} of job ${input.jobId} vanished`);
    return record;
  }

  async get(
    jobId: string,
    toolCallId: string,
    kind: InputRecord['kind'],
    round: number,
  ): Promise<InputRecord | undefined> {
    const result = await this.pool.query<InputRecord>(
      `SELECT ${COLUMNS} FROM tool_call_inputs WHERE job_id = $1 AND tool_call_id = $2 AND kind = $3 AND round = $4`,
      [jobId, toolCallId, kind, round],
    );
    return result.rows[0];
  }

  /** Every question and approval of a job, oldest first: the pending ones and the audit trail. */
  async forJob(jobId: string): Promise<InputRecord[]> {
    const result = await this.pool.query<InputRecord>(
      `SELECT ${COLUMNS} FROM tool_call_inputs WHERE job_id = $1 ORDER BY created_at, tool_call_id, round`,
      [jobId],
    );
    return result.rows;
  }

  /**
   * What a call waits for now, by kind: its approval (one, round 0), or its latest question round.
   */
  latest(jobId: string, toolCallId: string, kind: InputRecord['kind']): Promise<InputRecord | undefined> {
    return kind === 'approval'
      ? this.get(jobId, toolCallId, 'approval', 0)
      : this.lastQuestion(jobId, toolCallId);
  }

  /** The latest question round of a call, if it asked any. */
  async lastQuestion(jobId: string, toolCallId: string): Promise<InputRecord | undefined> {
    const result = await this.pool.query<InputRecord>(
      `SELECT ${COLUMNS} FROM tool_call_inputs WHERE job_id = $1 AND tool_call_id = $2 AND kind = 'question'
       ORDER BY round DESC LIMIT 1`,
      [jobId, toolCallId],
    );
    return result.rows[0];
  }

  /** A pending input past its expiry becomes `expired`; returns whether it now is. */
  async expireIfDue(record: InputRecord, now = new Date()): Promise<boolean> {
    if (record.state === 'expired') return true;
    if (record.state !== 'pending' || record.expiresAt.getTime() > now.getTime()) return false;
    await this.pool.query(
      `UPDATE tool_call_inputs SET state = 'expired' WHERE job_id = $1 AND tool_call_id = $2 AND kind = $3
       AND round = $4 AND state = 'pending'`,
      [record.jobId, record.toolCallId, record.kind, record.round],
    );
    return true;
  }

  /** The job ended (deadline, cancel): nothing of it waits any more. */
  async expireAll(jobId: string): Promise<void> {
    await this.pool.query(
      `UPDATE tool_call_inputs SET state = 'expired' WHERE job_id = $1 AND state = 'pending'`,
      [jobId],
    );
  }

  /**
   * The run stops to wait: `running` → `input_required`, unless every input it waits for was answered
   * meanwhile (then false: the run carries on instead of parking).
   */
  async park(jobId: string): Promise<boolean> {
    return this.inJobLock(jobId, async (client) => {
      const open = await client.query(
        `SELECT 1 FROM tool_call_inputs WHERE job_id = $1 AND state = 'pending' AND expires_at > now() LIMIT 1`,
        [jobId],
      );
      if (open.rowCount === 0) return false;
      const parked = await client.query(
        `UPDATE jobs SET status = 'input_required' WHERE id = $1 AND status = 'running'`,
        [jobId],
      );
      return (parked.rowCount ?? 0) > 0;
    });
  }

  /**
   * Records a person's answer or decision, once. `resume` is true when it was the last thing a parked
   * job waited for: the job is `queued` again and the caller wakes its run.
   */
  async answer(
    key: Pick<InputRecord, 'jobId' | 'toolCallId' | 'kind'>,
    answer: Answer | ApprovalDecision,
    decidedBy: string,
    accept: (record: InputRecord) => void,
  ): Promise<AnswerResult> {
    return this.inJobLock(key.jobId, async (client) => {
      const found = await client.query<InputRecord>(
        `SELECT ${COLUMNS} FROM tool_call_inputs WHERE job_id = $1 AND tool_call_id = $2 AND kind = $3
         ORDER BY round DESC LIMIT 1 FOR UPDATE`,
        [key.jobId, key.toolCallId, key.kind],
      );
      const record = found.rows[0];
      if (!record) return { ok: false, reason: 'not_found' };
      if (record.state !== 'pending') return { ok: false, reason: 'not_pending', record };
      if (record.expiresAt.getTime() <= Date.now()) return { ok: false, reason: 'expired', record };
      accept(record); // throws a 4xx when the answer does not fit the request
      const updated = await client.query<InputRecord>(
        `UPDATE tool_call_inputs SET state = 'answered', answer = $5, decided_by = $6, decided_at = now()
         WHERE job_id = $1 AND tool_call_id = $2 AND kind = $3 AND round = $4 RETURNING ${COLUMNS}`,
        [key.jobId, key.toolCallId, key.kind, record.round, JSON.stringify(safeJson(answer)), decidedBy],
      );
      const open = await client.query(
        `SELECT 1 FROM tool_call_inputs WHERE job_id = $1 AND state = 'pending' AND expires_at > now() LIMIT 1`,
        [key.jobId],
      );
      let resume = false;
      if (open.rowCount === 0) {
        const moved = await client.query(
          `UPDATE jobs SET status = 'queued' WHERE id = $1 AND status = 'input_required'`,
          [key.jobId],
        );
        resume = (moved.rowCount ?? 0) > 0;
      }
      return { ok: true, record: updated.rows[0] as InputRecord, resume };
    });
  }

  private async inJobLock<T>(jobId: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
