import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type ToolCallJob, ToolCallJobSchema, toolCallJobId } from '@switchyard/contracts';
import type { Job } from 'bullmq';
import { localOutcome } from '../dispatch/local-outcome.ts';
import { settledOutcome } from '../dispatch/settled-outcome.ts';
import { ToolCallDispatcher } from '../dispatch/tool-call-dispatcher.ts';
import { InputStore } from '../jobs/input-store.ts';
import { type JobRecord, JobStore } from '../jobs/job-store.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { ToolCallLifeCycle } from '../tool-calls/tool-call-life-cycle.ts';
import { GatewayCalls } from './gateway-calls.ts';
import { GATEWAY_CALL_ID, GatewayJobs } from './gateway-jobs.ts';

const SWEEP_EVERY_MS = 10_000;
/** A live replica records a settled call at once; one still unrecorded after this has no replica left. */
const ORPHANED_AFTER_MS = 30_000;
/** A call whose queue entry is missing this long after its job started will never get one. */
const LOST_AFTER_MS = 120_000;

/**
 * Ends `mcp` jobs whose client's request is gone (its replica died, or the client left with an
 * idempotency key, or did not come back with the answer to a relayed question): a dispatched call ran (or
 * runs) on its queue regardless, so any replica reads its outcome there; a call whose approval was decided,
 * or whose question was answered, or either expired, meanwhile goes on through the life cycle (sent once
 * approved or answered, `denied`/`expired` otherwise). Either way the job ends and stops counting
 * against the team's maxConcurrentJobs; a client that retries with its key gets the same outcome.
 */
@Injectable()
export class OrphanedCalls implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  /** Jobs this replica's sweep is carrying on (their call dispatched after a decision). */
  private readonly resumed = new Set<string>();

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(InputStore) private readonly inputs: InputStore,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(ToolCallLifeCycle) private readonly lifeCycle: ToolCallLifeCycle,
    @Inject(GatewayCalls) private readonly calls: GatewayCalls,
    @Inject(GatewayJobs) private readonly gatewayJobs: GatewayJobs,
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
    const rows = await this.store.openGatewayCalls(GATEWAY_CALL_ID, ORPHANED_AFTER_MS / 1000);
    for (const row of rows) {
      if (this.calls.isLocal(row.id) || this.resumed.has(row.id) || !row.server) continue;
      const job = await this.store.get(row.id);
      if (!job) continue;
      if (row.callStatus === 'awaiting_approval' || row.callStatus === 'awaiting_input')
        await this.resumeDecided(job, row.callStatus === 'awaiting_approval' ? 'approval' : 'question');
      else if (row.callStatus === 'dispatched') await this.settle(job, row.server);
    }
  }

  /**
   * A decided or expired approval, or an answered or expired question (one relayed to a client that did
   * not come back with the answer), nobody waits for any more: the life cycle carries the call on.
   */
  private async resumeDecided(job: JobRecord, kind: 'approval' | 'question'): Promise<void> {
    const input = await this.inputs.latest(job.id, GATEWAY_CALL_ID, kind);
    const open = input?.state === 'pending' && input.expiresAt.getTime() > Date.now();
    if (open || job.request.kind !== 'mcp') return;
    const log = this.log.child({ job_id: job.id, trace_id: job.traceId, team: job.team });
    log.info(
      { [kind]: input?.state ?? 'none' },
      'MCP call without its client: carried on after the decision',
    );
    this.resumed.add(job.id);
    this.gatewayJobs
      .run(job, {
        name: job.request.tool,
        args: job.request.arguments,
        cancel: new AbortController().signal,
        log,
      })
      .catch((error: unknown) => log.warn({ err: error }, 'carrying on an orphaned MCP call failed'))
      .finally(() => this.resumed.delete(job.id));
  }

  private async settle(job: JobRecord, server: string): Promise<void> {
    const queued = (await this.dispatcher.queue(server).getJob(toolCallJobId(job.id, GATEWAY_CALL_ID))) as
      | Job
      | undefined;
    const log = this.log.child({ job_id: job.id, trace_id: job.traceId, server });
    const tool = job.request.kind === 'mcp' ? job.request.tool : GATEWAY_CALL_ID;
    if (!queued) {
      if (Date.now() - (job.startedAt?.getTime() ?? Date.now()) < LOST_AFTER_MS) return;
      const call = { jobId: job.id, toolCallId: GATEWAY_CALL_ID, server, tool: '', enqueuedAt: Date.now() };
      const text =
        'The replica that made this call stopped, and the call has no queue entry to read its outcome from.';
      log.warn('orphaned MCP call without a queue entry: recorded as failed');
      await this.finish(job, tool, localOutcome(call, 'failed', text, 'orphaned', 'unknown'));
      return;
    }
    if (queued.finishedOn === undefined || Date.now() - queued.finishedOn < ORPHANED_AFTER_MS) return;
    const data = ToolCallJobSchema.safeParse(queued.data);
    if (!data.success) return;
    const outcome = settledOutcome(queued, data.data as ToolCallJob);
    if (!outcome) return;
    log.info({ status: outcome.status }, 'orphaned MCP call: outcome recorded from its queue job');
    await this.finish(job, tool, outcome);
  }

  private async finish(job: JobRecord, tool: string, outcome: Parameters<GatewayJobs['end']>[1]) {
    await this.lifeCycle.record(job, GATEWAY_CALL_ID, tool, outcome);
    await this.gatewayJobs.end(job, outcome);
  }
}
