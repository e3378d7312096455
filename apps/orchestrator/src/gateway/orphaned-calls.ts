import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type ToolCallJob, ToolCallJobSchema, toolCallJobId } from '@switchyard/contracts';
import type { Job } from 'bullmq';
import type pg from 'pg';
import { localOutcome } from '../dispatch/local-outcome.ts';
import { settledOutcome, ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { type JobRecord, JobStore } from '../jobs/job-store.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER, PG_POOL } from '../runtime/tokens.ts';
import { GATEWAY_CALL_ID, GatewayCalls } from './gateway-calls.ts';

const SWEEP_EVERY_MS = 10_000;
/** A live replica records a settled call at once; one still unrecorded after this has no replica left. */
const ORPHANED_AFTER_MS = 30_000;
/** A call whose queue entry is missing this long after its job started will never get one. */
const LOST_AFTER_MS = 120_000;

/**
 * Ends `mcp` jobs whose replica died while the client waited: the tool-call job ran (or runs) on its
 * queue regardless, so any replica can read its outcome there and record it, and the job stops counting
 * against the team's maxConcurrentJobs. A client that retries with its idempotency key gets the same outcome.
 */
@Injectable()
export class OrphanedCalls implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(GatewayCalls) private readonly calls: GatewayCalls,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(
      () =>
        void this.sweep().catch((error: unknown) =>
          this.log.warn({ err: error }, 'orphaned MCP call sweep failed'),
        ),
      SWEEP_EVERY_MS,
    );
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    const { rows } = await this.pool.query<{ id: string; server: string | null }>(
      `SELECT j.id, c.server FROM jobs j JOIN tool_calls c ON c.job_id = j.id AND c.tool_call_id = $1
        WHERE j.kind = 'mcp' AND j.status = 'running' AND c.outcome IS NULL
          AND j.started_at < now() - make_interval(secs => $2) ORDER BY j.started_at LIMIT 100`,
      [GATEWAY_CALL_ID, ORPHANED_AFTER_MS / 1000],
    );
    for (const row of rows) {
      if (this.calls.isLocal(row.id) || !row.server) continue;
      const job = await this.store.get(row.id);
      if (job) await this.settle(job, row.server);
    }
  }

  private async settle(job: JobRecord, server: string): Promise<void> {
    const queued = (await this.dispatcher.queue(server).getJob(toolCallJobId(job.id, GATEWAY_CALL_ID))) as
      | Job
      | undefined;
    const log = this.log.child({ job_id: job.id, trace_id: job.traceId, server });
    if (!queued) {
      if (Date.now() - (job.startedAt?.getTime() ?? Date.now()) < LOST_AFTER_MS) return;
      const call = { jobId: job.id, toolCallId: GATEWAY_CALL_ID, server, tool: '', enqueuedAt: Date.now() };
      const text =
        'The replica that made this call stopped, and the call has no queue entry to read its outcome from.';
      log.warn('orphaned MCP call without a queue entry: recorded as failed');
      await this.calls.record(job, localOutcome(call, 'failed', text, 'orphaned', 'unknown'), log);
      return;
    }
    if (queued.finishedOn === undefined || Date.now() - queued.finishedOn < ORPHANED_AFTER_MS) return;
    const data = ToolCallJobSchema.safeParse(queued.data);
    if (!data.success) return;
    const outcome = settledOutcome(queued, data.data as ToolCallJob);
    if (!outcome) return;
    log.info({ status: outcome.status }, 'orphaned MCP call: outcome recorded from its queue job');
    await this.calls.record(job, outcome, log);
  }
}
