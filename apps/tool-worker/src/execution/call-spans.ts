import { type Attributes, type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  contextFrom,
  type ServerConfig,
  type StoredToolCallOutcome,
  type ToolCallJob,
} from '@switchyard/contracts';
import { ATTR, tracerFor } from '@switchyard/telemetry';
import { WORKER_SERVICE } from '../telemetry/service.ts';

const tracer = tracerFor(WORKER_SERVICE);

/**
 * The worker's span for one delivery of a tool-call job (messaging "process"), a child of the
 * dispatcher's "send" span through the W3C context carried in the job data.
 */
export function inConsumerSpan(
  queue: string,
  bullJobId: string | undefined,
  call: ToolCallJob,
  work: (span: Span) => Promise<StoredToolCallOutcome>,
): Promise<StoredToolCallOutcome> {
  const attributes: Attributes = {
    [ATTR.MESSAGING_SYSTEM]: 'bullmq',
    [ATTR.MESSAGING_OPERATION_TYPE]: 'process',
    [ATTR.MESSAGING_DESTINATION_NAME]: queue,
    ...(bullJobId ? { [ATTR.MESSAGING_MESSAGE_ID]: bullJobId } : {}),
    [ATTR.JOB_ID]: call.jobId,
    [ATTR.TOOL_CALL_ID]: call.toolCallId,
  };
  return tracer.startActiveSpan(
    `process ${queue}`,
    { kind: SpanKind.CONSUMER, attributes },
    contextFrom(call.trace),
    async (span) => {
      try {
        const outcome = await work(span);
        recordOutcome(span, outcome);
        return outcome;
      } catch (error) {
        // Thrown only to retry or to put the call back: not an outcome yet.
        span.setAttribute(ATTR.REDELIVERY, (error as Error).name);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * The MCP client span of one `tools/call` (OpenTelemetry MCP conventions: `{mcp.method.name} {tool}`).
 * Its context is what the MCP server receives in `params._meta`, so a server that traces joins in.
 */
export function inMcpCallSpan<T>(
  server: string,
  config: ServerConfig,
  tool: string,
  attempt: number,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const attributes: Attributes = {
    [ATTR.MCP_METHOD_NAME]: 'tools/call',
    [ATTR.GEN_AI_OPERATION_NAME]: 'execute_tool',
    [ATTR.GEN_AI_TOOL_NAME]: tool,
    [ATTR.SERVER]: server,
    [ATTR.ATTEMPTS]: attempt,
    [ATTR.NETWORK_TRANSPORT]: config.transport === 'stdio' ? 'pipe' : 'tcp',
    ...(config.transport !== 'stdio' ? { [ATTR.SERVER_ADDRESS]: new URL(config.url).hostname } : {}),
  };
  return tracer.startActiveSpan(`tools/call ${tool}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await work(span);
    } finally {
      span.end();
    }
  });
}

export function recordOutcome(span: Span, outcome: StoredToolCallOutcome): void {
  span.setAttributes({
    [ATTR.OUTCOME_STATUS]: outcome.status,
    [ATTR.OUTCOME_EXECUTED]: outcome.executed,
    [ATTR.ATTEMPTS]: outcome.attempts,
  });
  if (outcome.status !== 'ok') {
    span.setAttribute(ATTR.ERROR_TYPE, outcome.status);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? outcome.status });
  }
}
