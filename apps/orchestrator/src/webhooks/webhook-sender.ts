import { Webhook } from 'standardwebhooks';

/** Of a receiver's answer, only this much is read (for the error text): a huge or endless body costs nothing. */
const MAX_RESPONSE_BYTES = 1024;

export interface WebhookAttempt {
  ok: boolean;
  statusCode?: number;
  /** Why the attempt failed, for the delivery view and the log; never contains the secret or the body sent. */
  error?: string;
}

export interface WebhookMessage {
  id: string;
  url: string;
  payload: string;
  secret: string;
}

/**
 * One signed POST (Standard Webhooks headers). A 2xx is delivered; anything else — another status, a
 * redirect (never followed: the receiver is the URL that was configured, not where it points), a
 * timeout, a refused connection — is a failed attempt that BullMQ retries.
 */
export async function sendWebhook(message: WebhookMessage, timeoutMs: number): Promise<WebhookAttempt> {
  const timestamp = new Date();
  const signature = new Webhook(message.secret).sign(message.id, timestamp, message.payload);
  let response: Response;
  try {
    response = await fetch(message.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'switchyard-webhooks',
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: message.payload,
    });
  } catch (error) {
    return { ok: false, error: describeFetchError(error, timeoutMs) };
  }
  const statusCode = response.status;
  if (statusCode >= 200 && statusCode < 300) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: true, statusCode };
  }
  if (statusCode >= 300 && statusCode < 400) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, statusCode, error: `answered ${statusCode} (redirects are not followed)` };
  }
  const excerpt = await readExcerpt(response);
  return { ok: false, statusCode, error: `answered ${statusCode}${excerpt ? `: ${excerpt}` : ''}` };
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  const failure = error as Error & { cause?: { code?: string; message?: string } };
  if (failure.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = failure.cause;
  return cause?.code ? `${cause.code}: ${cause.message ?? failure.message}` : failure.message;
}

/** The start of the answer's body as text, the rest never read. */
async function readExcerpt(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_RESPONSE_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that breaks off leaves what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks)
    .subarray(0, MAX_RESPONSE_BYTES)
    .toString('utf8')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}
