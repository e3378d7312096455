import type { JobRecord, ToolCallRecord } from './job-store.ts';

/** What `GET /v1/jobs/:id` returns. */
export function jobView(job: JobRecord, toolCalls: ToolCallRecord[], jaegerUiUrl?: string) {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    result: job.result ?? null,
    error: job.error,
    traceId: job.traceId,
    ...(jaegerUiUrl ? { traceUrl: `${jaegerUiUrl.replace(/\/$/, '')}/trace/${job.traceId}` } : {}),
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    toolCalls: toolCalls.map((call) => ({
      id: call.toolCallId,
      tool: call.modelTool,
      server: call.server,
      serverTool: call.tool,
      arguments: call.arguments,
      status: call.status,
      outcome: call.outcome,
    })),
  };
}
