import { z } from 'zod';

/**
 * What a webhook can be told about a job: its end (the default), or that a replica started running it.
 * One event per final job status: `job.completed_with_errors` is a batch whose calls did not all end ok.
 */
export const WEBHOOK_EVENTS = [
  'job.running',
  'job.succeeded',
  'job.completed_with_errors',
  'job.failed',
  'job.cancelled',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** A webhook that does not choose hears about the job's end, whichever way it ended. */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEvent[] = [
  'job.succeeded',
  'job.completed_with_errors',
  'job.failed',
  'job.cancelled',
];

export const WebhookEventsSchema = z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length);

/** Receivers are web endpoints: http(s) only, no credentials in the URL (they would be logged). */
export const WebhookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(2_000)
  // zod runs this refinement after a failed .url() check too: an unparsable value is that check's error
  // (named at its key), not a TypeError thrown out of the config parse.
  .refine((url) => {
    if (!URL.canParse(url)) return true;
    const { username, password } = new URL(url);
    return !username && !password;
  }, 'must not carry credentials');

/**
 * A Standard Webhooks signing secret: `whsec_` and the base64 of 24–64 random bytes
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
 */
export const WebhookSecretSchema = z
  .string()
  .regex(
    /^whsec_[A-Za-z0-9+/]+={0,2}$/,
    'must be "whsec_" followed by base64 (e.g. whsec_$(openssl rand -base64 32))',
  )
  .refine((secret) => {
    const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
    return bytes >= 24 && bytes <= 64;
  }, 'must encode 24 to 64 bytes');
