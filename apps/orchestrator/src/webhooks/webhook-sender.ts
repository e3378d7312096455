import { request as httpRequest, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import {
  checkWebhookTarget,
  type EgressPolicy,
  type ResolvedAddress,
} from '../egress/webhook-target-check.ts';

export interface WebhookAttempt {
  ok: boolean;
  statusCode?: number;
  /**
   * Why the attempt failed, for the delivery view and the log: a status code and a short reason of our
   * own. Never the receiver's body (which is not even read), the secret, or the body sent.
   */
  error?: string;
  /** Retrying cannot help: the receiver is a refused literal address or name. */
  final?: boolean;
}

export interface WebhookMessage {
  id: string;
  url: string;
  payload: string;
  secret: string;
}

export interface SendOptions {
  /** One attempt (resolve, connect, send, answer) may take this long. */
  timeoutMs: number;
  egress: EgressPolicy;
}

/**
 * One signed POST (Standard Webhooks headers) to a receiver outside the deployment: the host is resolved
 * and every address checked (docs/operations.md, Webhooks), and the connection goes to a checked address.
 * A 2xx is delivered; anything else — another status, a redirect (never followed: the receiver is the URL
 * that was configured, not where it points), a timeout, a refused connection, a refused address — is a
 * failed attempt.
 */
export async function sendWebhook(message: WebhookMessage, options: SendOptions): Promise<WebhookAttempt> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let target: Awaited<ReturnType<typeof checkWebhookTarget>>;
  try {
    target = await beforeAbort(checkWebhookTarget(message.url, options.egress), signal);
  } catch {
    return { ok: false, error: `no address within ${options.timeoutMs} ms` };
  }
  if (!target.ok) return { ok: false, error: target.reason, final: target.final };
  const { addresses } = target;
  const timestamp = new Date();
  const signature = new Webhook(message.secret).sign(message.id, timestamp, message.payload);
  const url = new URL(message.url);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        signal,
        // A connection of its own, to the addresses just checked: no pooled socket, no second lookup.
        agent: false,
        lookup: checkedLookup(addresses),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(message.payload),
          'user-agent': 'switchyard-webhooks',
          'webhook-id': message.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
      },
      (response) => {
        // Only the status counts; the body is never read (it may be huge, endless, or carry secrets).
        response.destroy();
        resolve(attemptOf(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', (error) => {
      resolve({
        ok: false,
        error: signal.aborted ? `no answer within ${options.timeoutMs} ms` : describe(error),
      });
    });
    outgoing.end(message.payload);
  });
}

function attemptOf(statusCode: number): WebhookAttempt {
  if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode };
  if (statusCode >= 300 && statusCode < 400) {
    return { ok: false, statusCode, error: `answered ${statusCode} (redirects are not followed)` };
  }
  // The reason phrase is the standard one for the code, not the receiver's (that is its text too).
  const reason = STATUS_CODES[statusCode];
  return { ok: false, statusCode, error: `answered ${statusCode}${reason ? ` (${reason})` : ''}` };
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/** net's `lookup` answering only with the checked addresses (of the family asked for, if any). */
function checkedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable =
      family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
    const [first] = usable;
    if (!first) {
      const error: NodeJS.ErrnoException = new Error(`no checked IPv${family} address`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}

function beforeAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
