import { ProblemException } from '../http/problem.ts';
import type { Cidr } from './address-policy.ts';
import { literalRefusal } from './webhook-target-check.ts';

/**
 * A job whose `webhook.url` points inside the deployment (a literal internal address or a loopback or
 * metadata name) is refused with a 400 at submit; a name is checked again when each delivery resolves it.
 */
export function refuseInternalWebhook(request: { webhook?: { url: string } }, allow: readonly Cidr[]): void {
  const url = request.webhook?.url;
  if (!url) return;
  const refusal = literalRefusal(url, allow);
  if (!refusal) return;
  const message = `must not point inside the deployment: ${refusal}`;
  throw new ProblemException('validation-failed', `webhook.url: ${message}`, {
    errors: [{ path: 'webhook.url', message }],
  });
}
