import { type Attributes, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  contextFrom,
  type ServerConfig,
  type StoredToolCallOutcome,
  type ToolCallJob,
} from '@switchyard/contracts';

const tracer = trace.getTracer('switchyard-tool-worker');

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
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'process',
    'messaging.destination.name': queue,
    ...(bullJobId ? { 'messaging.message.id': bullJobId } : {}),
    'switchyard.job.id': call.jobId,
    'switchyard.tool_call.id': call.toolCallId,
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
        span.setAttribute('switchyard.redelivery', (error as Error).name);
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
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'switchyard.server': server,
    'switchyard.attempt': attempt,
    'network.transport': config.transport === 'stdio' ? 'pipe' : 'tcp',
    ...(config.transport !== 'stdio' ? { 'server.address': new URL(config.url).hostname } : {}),
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
    'switchyard.outcome.status': outcome.status,
    'switchyard.outcome.executed': outcome.executed,
    'switchyard.attempts': outcome.attempts,
  });
  if (outcome.status !== 'ok') {
    span.setAttribute('error.type', outcome.status);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? outcome.status });
  }
}
