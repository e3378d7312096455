import { DEFAULT_WEBHOOK_EVENTS, type TeamConfig, type WebhookEvent } from '@switchyard/contracts';
import type { StoredJobRequest } from '../jobs/job-request.ts';

/** One receiver of a job's events: the job's own webhook, or the team's n-th. */
export interface WebhookTarget {
  /** `job`, or `team-<index in teams.<t>.webhooks>`: where the signing secret is looked up at delivery. */
  target: string;
  url: string;
  events: WebhookEvent[];
}

/** Every receiver a job has, whatever the event (the job view lists their deliveries). */
export function webhookTargets(request: StoredJobRequest, team: TeamConfig | undefined): WebhookTarget[] {
  const targets: WebhookTarget[] = [];
  // A gateway call (kind mcp) has no webhook of its own; the team's still hear of it.
  if (request.kind !== 'mcp' && request.webhook) {
    targets.push({
      target: 'job',
      url: request.webhook.url,
      events: request.webhook.events ?? DEFAULT_WEBHOOK_EVENTS,
    });
  }
  team?.webhooks.forEach((hook, index) => {
    targets.push({ target: `team-${index}`, url: hook.url, events: hook.events });
  });
  return targets;
}

/**
 * The secret that signs deliveries to `target`, read from the config when the delivery is sent (never
 * stored in Redis with the delivery). Undefined when the config no longer has one.
 */
export function signingSecret(target: string, team: TeamConfig | undefined): string | undefined {
  if (!team) return undefined;
  if (target === 'job') return team.webhookSecret;
  const index = Number(target.slice('team-'.length));
  return team.webhooks[index]?.secret ?? team.webhookSecret;
}

/** A job's status event as a webhook event; `queued` is not one (the submitter already knows). */
export function webhookEventOf(status: unknown): WebhookEvent | undefined {
  switch (status) {
    case 'running':
      return 'job.running';
    case 'succeeded':
      return 'job.succeeded';
    case 'completed_with_errors':
      return 'job.completed_with_errors';
    case 'failed':
      return 'job.failed';
    case 'cancelled':
      return 'job.cancelled';
    default:
      return undefined;
  }
}
