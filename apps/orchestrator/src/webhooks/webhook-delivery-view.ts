import { WEBHOOK_EVENTS } from '@switchyard/contracts';
import type { JobState } from 'bullmq';
import { z } from 'zod';
import type { WebhookDeliveryJob, WebhookDeliveryProgress } from './webhook-delivery.ts';

const isoTime = z.iso.datetime();

/** A delivery as GET /v1/jobs/:id/webhooks shows it; timestamps are ISO 8601. */
export const WebhookDeliveryViewSchema = z.object({
  /** Also the `webhook-id` header of every attempt. */
  id: z.string(),
  event: z.enum(WEBHOOK_EVENTS),
  url: z.string(),
  /** `job` (the job's own webhook) or `team-<n>` (the team's n-th). */
  target: z.string(),
  /** pending: not tried yet; sending: an attempt is under way; retrying: failed, tried again at nextAttemptAt. */
  state: z.enum(['pending', 'sending', 'retrying', 'delivered', 'failed']),
  attempts: z.int().min(0),
  lastAttemptAt: isoTime.nullable(),
  lastStatusCode: z.int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: isoTime.nullable(),
  deliveredAt: isoTime.nullable(),
});
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryViewSchema>;

/** The body of GET /v1/jobs/:id/webhooks (for the OpenAPI document). */
export const WebhookDeliveryListSchema = z.object({
  jobId: z.string(),
  deliveries: z.array(WebhookDeliveryViewSchema),
});
export type WebhookDeliveryList = z.output<typeof WebhookDeliveryListSchema>;

function stateOf(
  bullState: JobState | 'unknown',
  progress: Partial<WebhookDeliveryProgress>,
): WebhookDeliveryView['state'] {
  if (bullState === 'completed') return 'delivered';
  if (bullState === 'failed') return 'failed';
  if (bullState === 'active') return 'sending';
  return (progress.attempts ?? 0) > 0 ? 'retrying' : 'pending';
}

export function webhookDeliveryView(
  job: WebhookDeliveryJob,
  bullState: JobState | 'unknown',
): WebhookDeliveryView {
  const progress = (typeof job.progress === 'object' ? job.progress : {}) as Partial<WebhookDeliveryProgress>;
  const state = stateOf(bullState, progress);
  return {
    id: job.id ?? '',
    event: job.data.event,
    url: job.data.url,
    target: job.data.target,
    state,
    attempts: progress.attempts ?? 0,
    lastAttemptAt: progress.lastAttemptAt ?? null,
    lastStatusCode: progress.lastStatusCode ?? null,
    lastError: progress.lastError ?? null,
    nextAttemptAt: state === 'retrying' ? (progress.nextAttemptAt ?? null) : null,
    deliveredAt: state === 'delivered' && job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
  };
}
