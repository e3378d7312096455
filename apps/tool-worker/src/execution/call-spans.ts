import { type Attributes, type Span, SpanKind } from '@opentelemetry/api';
import {
  contextFrom,
  type ServerConfig,
  type StoredToolCallOutcome,
  type ToolCallJob,
} from '@switchyard/contracts';
import { ATTR, markOutcome, SettlingSpan, tracerFor } from '@switchyard/telemetry';
import { WORKER_SERVICE } from '../telemetry/service.ts';

const tracer = tracerFor(WORKER_SERVICE);

/**
 * The MCP span of a delivery's attempt. The request ends before the worker has decided what it was (a
 * timeout of a non-idempotent call, a retried one, …), so the span takes its end time when the request
 * ends and is settled with the delivery's outcome by inConsumerSpan.
 */
export class AttemptMcpSpan {
  private settling: SettlingSpan | undefined;
  private failure: Error | undefined;

  /** The MCP span of this attempt started (inMcpCallSpan). */
  opened(settling: SettlingSpan): void {
    this.settling = settling;
  }

  /** The request threw `error` (the span keeps it as an exception event). */
  threw(error: Error): void {
    this.failure = error;
    this.settling?.span.recordException(error);
  }

  /** Ends the span as the delivery ended: with its outcome's status, or `redelivered` for one that threw. */
  settle(status?: string, detail?: string): void {
    if (status !== undefined) this.settling?.settle(status, detail);
    else if (this.failure) this.settling?.settle('redelivered', this.failure.message);
    else this.settling?.settle();
  }
}

/** What ended a delivery that threw instead of returning an outcome (see the processor). */
interface RetriedAttempt extends Error {
  status?: string;
}

/**
 * The worker's span for one delivery of a tool-call job (messaging "process"), a child of the
 * dispatcher's "send" span through the W3C context carried in the job data.
 */
export function inConsumerSpan(
  queue: string,
  bullJobId: string | undefined,
  call: ToolCallJob,
  work: (span: Span, mcp: AttemptMcpSpan) => Promise<StoredToolCallOutcome>,
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
      const mcp = new AttemptMcpSpan();
      try {
        const outcome = await work(span, mcp);
        recordOutcome(span, outcome);
        mcp.settle(outcome.status, outcome.error);
        return outcome;
      } catch (error) {
        // Thrown only to retry or to put the call back: not an outcome yet.
        span.setAttribute(ATTR.REDELIVERY, (error as Error).name);
        // A retried attempt failed as what its call would have ended as (RetryableCallError.status).
        const { status, message } = error as RetriedAttempt;
        if (status) {
          markOutcome(span, status, message);
          mcp.settle(status, message);
        }
        throw error;
      } finally {
        mcp.settle();
        span.end();
      }
    },
  );
}

/** What the MCP span says about the session its request went over. */
export interface McpSessionFacts {
  protocolVersion: string | undefined;
  /** Streamable HTTP's Mcp-Session-Id; none over stdio or a stateless server. */
  httpSessionId: string | undefined;
}

/** mcp.protocol.version and mcp.session.id (OpenTelemetry MCP conventions) of the session the call used. */
export function describeSession(span: Span, session: McpSessionFacts): void {
  if (session.protocolVersion) span.setAttribute(ATTR.MCP_PROTOCOL_VERSION, session.protocolVersion);
  if (session.httpSessionId) span.setAttribute(ATTR.MCP_SESSION_ID, session.httpSessionId);
}

/**
 * The MCP client span of one `tools/call` (OpenTelemetry MCP conventions: `{mcp.method.name} {tool}`).
 * Its context is what the MCP server receives in `params._meta`, so a server that traces joins in. It is
 * ended and marked by `attempt` once the delivery's outcome is known.
 */
export function inMcpCallSpan<T>(
  server: string,
  config: ServerConfig,
  tool: string,
  attempt: number,
  slot: AttemptMcpSpan,
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
    const settling = new SettlingSpan(span);
    slot.opened(settling);
    try {
      return await work(span);
    } catch (error) {
      slot.threw(error as Error);
      throw error;
    } finally {
      settling.stop();
    }
  });
}

export function recordOutcome(span: Span, outcome: StoredToolCallOutcome): void {
  span.setAttributes({
    [ATTR.OUTCOME_STATUS]: outcome.status,
    [ATTR.OUTCOME_EXECUTED]: outcome.executed,
    [ATTR.ATTEMPTS]: outcome.attempts,
  });
  markOutcome(span, outcome.status, outcome.error);
}
