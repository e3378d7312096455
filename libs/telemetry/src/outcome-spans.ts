import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { ATTR } from './attributes.ts';

/**
 * A tool call's outcome on one of the spans of its path (OpenTelemetry's recording-errors guidance):
 * any status but `ok` is an error, so the span's status is ERROR with a description that starts with the
 * outcome, and `error.type` is the outcome status itself (`timeout`, `tool_error`, `unavailable`, …) —
 * never an SDK's class name. `tool_error` counts too: the MCP conventions call a tools/call whose result
 * has `isError` an error, and the model-facing outcome is the same at every hop.
 */
export function markOutcome(span: Span, status: string, detail?: string): void {
  if (status === 'ok') return;
  span.setAttribute(ATTR.ERROR_TYPE, status);
  span.setStatus({ code: SpanStatusCode.ERROR, message: detail ? `${status}: ${detail}` : status });
}

/**
 * A span whose operation is over before the outcome it belongs to is known: an enqueue (the call's
 * outcome arrives later) or one MCP request (the worker decides the outcome after it). `stop()` takes
 * the end time when the operation ends; `settle()` marks the outcome and ends the span at that time,
 * so the span's duration is the operation's own and its status is the call's.
 */
export class SettlingSpan {
  private endTime: number | undefined;
  private settled = false;

  constructor(readonly span: Span) {}

  /** The operation ended now (later calls keep the first time). */
  stop(): void {
    this.endTime ??= performance.now();
  }

  /** Marks `status` (nothing for `ok` or none) and ends the span at its stop time; once. */
  settle(status?: string, detail?: string): void {
    if (this.settled) return;
    this.settled = true;
    if (status) markOutcome(this.span, status, detail);
    this.stop();
    this.span.end(this.endTime);
  }
}

const failedCalls = new WeakMap<Span, string[]>();

/** How many failed calls a job span's description names before it only counts them. */
const NAMED_CALLS = 5;

/**
 * The outcome of one of a job span's calls (a run, or an /mcp tools/call): the first call that did not
 * end `ok` names its `error.type`, and the description lists the failed calls, so a job with a failed
 * call is ERROR wherever it is looked at from.
 */
export function markJobCallOutcome(span: Span | undefined, callId: string, status: string): void {
  if (!span || status === 'ok') return;
  const failed = failedCalls.get(span) ?? [];
  if (failed.length === 0) {
    failedCalls.set(span, failed);
    span.setAttribute(ATTR.ERROR_TYPE, status);
  }
  failed.push(`${callId} ${status}`);
  const named = failed.slice(0, NAMED_CALLS).join(', ');
  const more = failed.length > NAMED_CALLS ? ` and ${failed.length - NAMED_CALLS} more` : '';
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: `${failed.length} call(s) did not end ok: ${named}${more}`,
  });
}
