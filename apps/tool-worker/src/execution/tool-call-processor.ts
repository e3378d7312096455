import {
  type ArgumentValidator,
  carrierFrom,
  isIdempotent,
  type ServerConfig,
  safeJson,
  type ToolCallJob,
  ToolCallJobSchema,
  type ToolCallOutcome,
  type TraceCarrier,
  toolQueueName,
} from '@switchyard/contracts';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '../runtime/logger.ts';
import type { ManagedSession } from '../sessions/managed-session.ts';
import { classifyCallError } from './call-errors.ts';
import { inConsumerSpan, inMcpCallSpan } from './call-spans.ts';
import { buildOutcome, type CallTiming } from './outcome-builder.ts';
import { capResult, textForModel } from './result-cap.ts';

/** Job progress doubles as the at-most-once marker: it is written before a non-idempotent call is sent. */
interface DispatchMarker {
  dispatchedBy: string;
  dispatchedAt: number;
}

function dispatchMarker(progress: unknown): DispatchMarker | undefined {
  if (progress && typeof progress === 'object' && 'dispatchedBy' in progress)
    return progress as DispatchMarker;
  return undefined;
}

/** Thrown to make BullMQ retry an idempotent call with the job's backoff. */
export class RetryableCallError extends Error {
  override name = 'RetryableCallError';
}

/** How long a picked-up call waits before another look when this worker's session is not ready. */
const NOT_READY_REDELIVERY_MS = 250;

export interface ProcessorDeps {
  server: string;
  config: ServerConfig;
  session: ManagedSession;
  validator: ArgumentValidator;
  workerId: string;
  log: Logger;
}

/**
 * The BullMQ processor of one server's queue. It returns the call's outcome (the job's return value)
 * for every final result, and throws only to ask BullMQ for a retry of an idempotent call or to put a
 * call that was never sent back on the queue.
 */
export function createToolCallProcessor(deps: ProcessorDeps) {
  const { server, config, session, validator, workerId } = deps;

  async function processToolCall(job: Job, token?: string, signal?: AbortSignal): Promise<ToolCallOutcome> {
    const timing: CallTiming = { pickedUpAt: Date.now() };
    const parsed = ToolCallJobSchema.safeParse(job.data);
    if (!parsed.success) {
      return malformedJobOutcome(job, server, workerId, parsed.error.message, timing);
    }
    const call = parsed.data;
    return inConsumerSpan(toolQueueName(server), job.id, call, () =>
      settle(job, call, timing, token, signal),
    );
  }

  async function settle(
    job: Job,
    call: ToolCallJob,
    timing: CallTiming,
    token: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ToolCallOutcome> {
    // trace_id and span_id come from the active span (see runtime/logger.ts).
    const log = deps.log.child({
      server,
      tool: call.tool,
      job_id: call.jobId,
      tool_call_id: call.toolCallId,
      bull_job_id: job.id,
    });
    const previousAttempts = job.attemptsMade;
    const marker = dispatchMarker(job.progress);
    const annotations = session.tool(call.tool)?.annotations;
    const idempotent = call.idempotent && isIdempotent(config, call.tool, annotations);
    const outcome = (fields: Parameters<typeof buildOutcome>[3]) =>
      buildOutcome(call, workerId, timing, fields);

    // At most once: a non-idempotent call that was already sent by a worker that then vanished
    // (its lock expired and BullMQ handed the job to us) must not run again.
    if (!idempotent && marker) {
      log.warn(
        { previousWorker: marker.dispatchedBy },
        'non-idempotent call re-delivered after its worker was lost',
      );
      return outcome({
        status: 'indeterminate',
        attempts: previousAttempts + 1,
        text: `The call to ${server}/${call.tool} was sent, but the worker running it was lost before it answered. It is not idempotent, so it was not run again; it may or may not have taken effect.`,
        error: `worker ${marker.dispatchedBy} lost mid-call`,
      });
    }
    if (previousAttempts === 0 && !marker && timing.pickedUpAt > call.deadline) {
      return outcome({
        status: 'expired',
        attempts: 0,
        text: `The call to ${server}/${call.tool} waited in the queue past its deadline and was not run.`,
        error: `picked up ${timing.pickedUpAt - call.deadline} ms after the deadline`,
      });
    }
    if (session.state !== 'ready' && session.state !== 'degraded') {
      return putBack(job, token, log, `session is ${session.state}`);
    }
    const tool = session.tool(call.tool);
    if (!tool) {
      return outcome({
        status: 'failed',
        executed: 'no',
        attempts: 0,
        text: `Server ${server} has no tool named "${call.tool}".`,
        error: 'unknown_tool',
      });
    }
    const check = validator.check(tool.inputSchema, call.arguments);
    if (!check.ok) {
      return outcome({
        status: 'invalid_arguments',
        attempts: 0,
        text: `Invalid arguments for ${server}__${call.tool}: ${check.errors.join('; ')}`,
        error: check.errors.join('; '),
      });
    }

    if (!idempotent) {
      await job.updateProgress({ dispatchedBy: workerId, dispatchedAt: Date.now() } satisfies DispatchMarker);
    }
    const attempts = previousAttempts + 1;
    const lastAttempt = attempts >= (job.opts.attempts ?? 1);
    timing.sentAt = Date.now();
    log.debug({ attempts, idempotent }, 'tool call sent');
    try {
      const result = await inMcpCallSpan(server, config, call.tool, attempts, (span) =>
        session
          .callTool(call.tool, call.arguments, {
            timeoutMs: config.timeoutMs,
            maxTotalTimeoutMs: config.maxTimeoutMs ?? config.timeoutMs * 4,
            ...(signal ? { signal } : {}),
            // The MCP span's own context, so a server that traces parents its spans under this call.
            meta: traceMeta(carrierFrom()),
            // Asking for progress is what lets a long call's progress notifications extend its timeout.
            onprogress: (progress) => {
              span.addEvent('progress', {
                progress: progress.progress,
                ...(progress.total ? { total: progress.total } : {}),
              });
              log.debug({ progress }, 'tool call progress');
            },
          })
          .then(
            (answer) => {
              if (answer.isError) span.setAttribute('error.type', 'tool_error');
              return answer;
            },
            (error: unknown) => {
              span.recordException(error as Error);
              span.setAttribute('error.type', (error as Error).name);
              throw error;
            },
          ),
      );
      // The server's bytes: text no store or model should choke on (NUL, lone surrogates) is replaced.
      const capped = capResult(
        { content: safeJson(result.content), structuredContent: safeJson(result.structuredContent) },
        config.maxResultBytes,
      );
      log.info({ isError: result.isError === true, runMs: Date.now() - timing.sentAt }, 'tool call finished');
      return outcome({
        status: result.isError ? 'tool_error' : 'ok',
        attempts,
        text: textForModel(capped),
        content: capped.content,
        ...(capped.structuredContent ? { structuredContent: capped.structuredContent } : {}),
        truncated: capped.truncated,
      });
    } catch (error) {
      const failure = classifyCallError(error, signal?.aborted === true);
      log.warn(
        { failure: failure.kind, err: failure.message, attempts, idempotent, lastAttempt },
        'tool call failed',
      );
      if (failure.kind === 'not_sent') {
        // Nothing reached the server, so even a non-idempotent call may go back on the queue.
        if (!idempotent) await job.updateProgress({});
        return putBack(job, token, log, failure.message);
      }
      const retryable = failure.kind === 'timeout' || failure.kind === 'transport';
      if (idempotent && retryable && !lastAttempt) {
        throw new RetryableCallError(`${server}/${call.tool} attempt ${attempts}: ${failure.message}`);
      }
      switch (failure.kind) {
        case 'timeout':
          return outcome({
            status: 'timeout',
            attempts,
            text: `The call to ${server}/${call.tool} did not finish within ${config.timeoutMs} ms and was cancelled; it may or may not have taken effect.`,
            error: failure.message,
          });
        case 'cancelled':
          return outcome({
            status: 'cancelled',
            executed: 'unknown',
            attempts,
            text: `The call to ${server}/${call.tool} was cancelled while it ran.`,
            error: failure.message,
          });
        case 'invalid_params':
          return outcome({
            status: 'invalid_arguments',
            executed: 'no',
            attempts,
            text: `Server ${server} rejected the arguments of ${call.tool}: ${failure.message}`,
            error: failure.message,
          });
        case 'unknown_tool':
          return outcome({
            status: 'failed',
            executed: 'no',
            attempts,
            text: `Server ${server} does not know the tool "${call.tool}".`,
            error: failure.message,
          });
        default:
          return outcome({
            status: 'failed',
            executed: 'unknown',
            attempts,
            text: `The call to ${server}/${call.tool} failed: ${failure.message}`,
            error: failure.message,
          });
      }
    }
  }

  return processToolCall;
}

function traceMeta(carrier: TraceCarrier): Record<string, string> | undefined {
  const { traceparent, tracestate, baggage } = carrier;
  if (!traceparent) return undefined;
  return { traceparent, ...(tracestate ? { tracestate } : {}), ...(baggage ? { baggage } : {}) };
}

/** Returns a call that this worker cannot send right now to the queue, for a worker that can. */
async function putBack(job: Job, token: string | undefined, log: Logger, reason: string): Promise<never> {
  log.info({ reason }, 'call put back on the queue');
  await job.moveToDelayed(Date.now() + NOT_READY_REDELIVERY_MS, token);
  throw new DelayedError();
}

function malformedJobOutcome(
  job: Job,
  server: string,
  workerId: string,
  reason: string,
  timing: CallTiming,
): ToolCallOutcome {
  const data = (job.data ?? {}) as Partial<ToolCallJob>;
  return {
    status: 'failed',
    executed: 'no',
    attempts: 0,
    server,
    tool: String(data.tool ?? 'unknown'),
    jobId: String(data.jobId ?? job.id),
    toolCallId: String(data.toolCallId ?? job.id),
    workerId,
    queuedMs: 0,
    runMs: 0,
    text: 'The tool call job was malformed and was not run.',
    content: [],
    truncated: false,
    error: `malformed job data: ${reason}`.slice(0, 2000),
    finishedAt: timing.pickedUpAt,
  };
}
