import type { Job, ToolCall } from '@switchyard/client';
import { table } from '../output/table.ts';

/** `job_… batch completed_with_errors — 5 calls (ok 3, tool_error 2)`, `job_… batch running — 1 call (pending 1)` */
export function jobHeadline(job: Job): string {
  if (!job.summary) return `${job.id} ${job.kind} ${job.status}`;
  const { calls, pending, byStatus } = job.summary;
  // Settled calls by outcome, then the ones still open; a job whose calls are all open has no outcomes yet.
  const counts = [
    ...Object.entries(byStatus).map(([status, count]) => `${status} ${count}`),
    ...(pending ? [`pending ${pending}`] : []),
  ];
  const breakdown = counts.length > 0 ? ` (${counts.join(', ')})` : '';
  return `${job.id} ${job.kind} ${job.status} — ${calls} ${calls === 1 ? 'call' : 'calls'}${breakdown}`;
}

/** What `jobs get` shows people: the job, then one row per tool call (where it ran, how, how long). */
export function jobDetails(job: Job): string {
  const lines = [
    jobHeadline(job),
    `created ${job.createdAt}  started ${job.startedAt ?? '-'}  finished ${job.finishedAt ?? '-'}`,
    `trace ${job.traceUrl ?? job.traceId}`,
  ];
  const metadata = Object.entries(job.metadata);
  if (metadata.length > 0)
    lines.push(`metadata ${metadata.map(([key, value]) => `${key}=${value}`).join(' ')}`);
  if (job.error) lines.push(`error: ${job.error}`);
  if (job.kind === 'agent' && typeof job.result === 'string') lines.push(`answer: ${job.result}`);
  for (const input of job.pendingInputs?.filter((pending) => pending.state === 'pending') ?? [])
    lines.push(
      input.kind === 'approval'
        ? `waits for approval: ${input.server}__${input.tool} [${input.toolCallId}] ${JSON.stringify(input.arguments ?? {})} ${input.digest} (until ${input.expiresAt})`
        : `waits for an answer: ${input.server}__${input.tool} [${input.toolCallId}] ${JSON.stringify(input.question ?? {})} (until ${input.expiresAt})`,
    );
  lines.push(
    '',
    table(
      job.toolCalls.map((call) => ({
        call: call.id,
        tool: call.tool,
        server: call.server,
        state: call.state,
        executed: call.outcome?.executed,
        attempts: call.outcome?.attempts,
        worker: call.workerId,
        'queued ms': call.outcome ? Math.round(call.outcome.queuedMs) : undefined,
        'run ms': call.outcome ? Math.round(call.outcome.runMs) : undefined,
      })),
    ),
  );
  const timings = job.toolCalls.flatMap(callTimings);
  if (timings.length > 0) lines.push('', ...timings);
  return lines.join('\n');
}

/**
 * Where a call's time went, one line each: every attempt a worker made (a retried call has several,
 * the gaps between them are backoff) and every wait for a person.
 */
function callTimings(call: ToolCall): string[] {
  const attempts = (call.attempts ?? []).map(
    (attempt) =>
      `${call.id} attempt ${attempt.attempt}${attempt.workerId ? ` on ${attempt.workerId}` : ''}: picked up ${attempt.pickedUpAt}, sent ${attempt.startedAt ?? '-'}, ended ${attempt.finishedAt}${attempt.error ? ` (${attempt.error})` : ''}`,
  );
  const waits = (call.waits ?? []).map(
    (wait) =>
      `${call.id} waited for ${wait.kind === 'approval' ? 'approval' : 'an answer'}: asked ${wait.askedAt}, ${wait.answeredAt ? `answered ${wait.answeredAt}` : `${wait.state} (until ${wait.expiresAt})`}`,
  );
  return [...waits, ...attempts];
}
