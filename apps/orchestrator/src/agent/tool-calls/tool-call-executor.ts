import { Inject, Injectable } from '@nestjs/common';
import type { ToolCallOutcome } from '@switchyard/contracts';
import { ATTR } from '@switchyard/telemetry';
import { ModelToolCatalog } from '../../catalog/model-tool-catalog.ts';
import { localOutcome } from '../../dispatch/local-outcome.ts';
import { ToolCallDispatcher } from '../../dispatch/tool-call-dispatcher.ts';
import { JobEvents } from '../../jobs/job-events.ts';
import { JobStore } from '../../jobs/job-store.ts';
import { OrchestratorMetrics } from '../../metrics/orchestrator-metrics.ts';
import { inSpan } from '../../telemetry/spans.ts';
import type { RunContext } from './run-context.ts';

export interface RequestedToolCall {
  id: string;
  /** Model-facing name, `<server>__<tool>`. */
  name: string;
  args: Record<string, unknown>;
  position: number;
}

/**
 * Runs one tool call of a job through the fleet and records it (docs/architecture.md §3, step 3). A call that already
 * has an outcome — the run was resumed or re-run after a crash — is answered from the record and never
 * dispatched again; one that was dispatched but not settled is re-dispatched under the same
 * deterministic job id, which finds the existing queue job instead of adding a second.
 */
@Injectable()
export class ToolCallExecutor {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog,
    @Inject(ToolCallDispatcher) private readonly dispatcher: ToolCallDispatcher,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
  ) {}

  execute(context: RunContext, call: RequestedToolCall): Promise<ToolCallOutcome> {
    return inSpan(
      `execute_tool ${call.name}`,
      {
        attributes: {
          [ATTR.GEN_AI_OPERATION_NAME]: 'execute_tool',
          [ATTR.GEN_AI_TOOL_NAME]: call.name,
          [ATTR.GEN_AI_TOOL_CALL_ID]: call.id,
          [ATTR.JOB_ID]: context.job.id,
        },
      },
      async (span) => {
        const outcome = await this.settle(context, call);
        span.setAttributes({
          [ATTR.OUTCOME_STATUS]: outcome.status,
          [ATTR.OUTCOME_EXECUTED]: outcome.executed,
          [ATTR.ATTEMPTS]: outcome.attempts,
        });
        if (outcome.status !== 'ok') span.setAttribute(ATTR.ERROR_TYPE, outcome.status);
        return outcome;
      },
    );
  }

  private async settle(context: RunContext, call: RequestedToolCall): Promise<ToolCallOutcome> {
    const { job, lease } = context;
    const recorded = await this.store.toolCall(job.id, call.id);
    if (recorded?.outcome) return recorded.outcome;
    // A replica that lost the run starts nothing and writes nothing more for it: the replica holding
    // the lock dispatches the same call under the same id and records its true outcome.
    await lease.confirm();

    const { tool, refused } = await this.catalog.resolve(call.name, context.filters, context.stop);
    lease.assertHeld();
    const target = {
      jobId: job.id,
      toolCallId: call.id,
      server: tool?.server ?? refused?.server ?? '',
      tool: tool?.tool ?? call.name,
      enqueuedAt: Date.now(),
      trace: { traceparent: job.traceparent },
    };
    await this.store.recordDispatch({
      jobId: job.id,
      toolCallId: call.id,
      position: call.position,
      modelTool: call.name,
      server: tool?.server ?? refused?.server ?? null,
      tool: tool?.tool ?? null,
      arguments: call.args,
    });
    await this.events.publish(job.id, 'tool_call.dispatched', {
      id: call.id,
      tool: call.name,
      server: tool?.server,
    });

    let outcome: ToolCallOutcome;
    // A wait for the server's tool list that a cancel cut short is the cancel's doing.
    if (context.cancel.aborted && (!refused || refused.code === 'catalog_unpublished')) {
      outcome = localOutcome(target, 'cancelled', 'The job was cancelled before this call ran.');
    } else if (refused) {
      outcome = localOutcome(target, refused.status, refused.text, refused.code, 'no');
    } else {
      outcome = await lease.race(
        this.dispatcher.dispatch({
          jobId: job.id,
          toolCallId: call.id,
          server: tool.server,
          tool: tool.tool,
          arguments: call.args,
          labels: { team: job.team },
        }),
      );
    }
    // Lost meanwhile: the replica holding the run now records this call, once, from the same queue job.
    lease.assertHeld();
    await this.store.recordOutcome(job.id, call.id, outcome);
    this.metrics.toolCall(outcome);
    await this.events.publish(job.id, 'tool_call.finished', {
      id: call.id,
      tool: call.name,
      server: outcome.server || undefined,
      status: outcome.status,
      executed: outcome.executed,
      attempts: outcome.attempts,
      queuedMs: outcome.queuedMs,
      runMs: outcome.runMs,
    });
    context.log.info(
      { tool_call_id: call.id, tool: call.name, status: outcome.status, attempts: outcome.attempts },
      'tool call settled',
    );
    return outcome;
  }
}
