import type { WebhookEvent } from '@switchyard/contracts';
import type { JobRecord } from '../jobs/job-store.ts';

/** A result larger than this (serialized) is left out of the body; the receiver reads it from the API. */
const MAX_INLINE_RESULT_BYTES = 16 * 1024;

/**
 * The body of one delivery, in the Standard Webhooks shape `{type, timestamp, data}`. Built once when the
 * delivery is queued, so every attempt sends the same bytes under the same webhook-id.
 */
export function webhookPayload(event: WebhookEvent, job: JobRecord, at: Date): string {
  const result = job.result === null || job.result === undefined ? undefined : JSON.stringify(job.result);
  const inline = result !== undefined && Buffer.byteLength(result) <= MAX_INLINE_RESULT_BYTES;
  return JSON.stringify({
    type: event,
    timestamp: at.toISOString(),
    data: {
      id: job.id,
      kind: job.kind,
      status: job.status,
      ...(job.error ? { error: job.error } : {}),
      ...(inline ? { result: job.result } : {}),
      ...(result !== undefined && !inline ? { resultOmitted: true } : {}),
      metadata: (job.request.kind === 'mcp' ? undefined : job.request.metadata) ?? {},
      traceId: job.traceId,
      createdAt: job.createdAt.toISOString(),
      startedAt: job.startedAt?.toISOString() ?? null,
      finishedAt: job.finishedAt?.toISOString() ?? null,
      links: { job: `/v1/jobs/${job.id}` },
    },
  });
}
