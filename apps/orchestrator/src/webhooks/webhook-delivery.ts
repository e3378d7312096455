import type { WebhookEvent } from '@switchyard/contracts';
import type { Job } from 'bullmq';

/** The BullMQ queue of webhook deliveries every replica consumes; braced, so it is one slot on a Redis Cluster. */
export const WEBHOOKS_QUEUE = '{webhooks}';

/** One delivery: a job's event to one receiver. The secret is not here; it stays in the config. */
export interface WebhookDeliveryData {
  jobId: string;
  team: string;
  event: WebhookEvent;
  target: string;
  url: string;
  payload: string;
}

/** What each attempt leaves on its BullMQ job (as progress), for the delivery view. */
export interface WebhookDeliveryProgress {
  attempts: number;
  lastAttemptAt: string;
  lastStatusCode?: number;
  lastError?: string;
  nextAttemptAt?: string;
}

export type WebhookDeliveryJob = Job<WebhookDeliveryData, { statusCode?: number }>;

/**
 * The delivery's BullMQ job id, which is also its `webhook-id`: the same for every attempt (receivers
 * dedupe on it) and for a second replica announcing the same event (BullMQ adds it once).
 */
export function deliveryId(jobId: string, event: WebhookEvent, target: string): string {
  return `${jobId}.${event}.${target}`;
}
