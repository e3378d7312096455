import { AsyncLocalStorage } from 'node:async_hooks';
import { SdkError, SdkErrorCode, type Transport } from '@modelcontextprotocol/client';

/** Called when the response stream of the request sent in this async context ended without its answer. */
type OnLost = (error: SdkError) => void;

const watching = new AsyncLocalStorage<OnLost>();

/**
 * Over Streamable HTTP each request's answer comes on its own response stream. When that stream ends
 * without the answer (the server died, a proxy cut it), 2026-07-28 has no resumption — the request is
 * lost — and 2025-11-25 resumes only while the server keeps an event store. The transport reports that
 * end through the `onRequestStreamEnd` send option, which the SDK's Client does not pass for its own
 * requests, so such a call would wait out its timeout and be reported as a timeout. This passes it for
 * requests sent inside `watchStream` (docs/semantics.md §11: a lost non-idempotent call is
 * `indeterminate`).
 */
export function watchResponseStreams(transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const onLost = watching.getStore();
    if (!onLost || !('method' in message) || !('id' in message)) return send(message, options);
    const method = message.method;
    return send(message, {
      ...options,
      onRequestStreamEnd: () => {
        options?.onRequestStreamEnd?.();
        // Also called after a stream that carried the answer: the request has settled by then, and
        // the SDK ignores an abort of a settled request.
        onLost(
          new SdkError(
            SdkErrorCode.ConnectionClosed,
            `the response stream of ${method} ended before its answer`,
          ),
        );
      },
    });
  };
}

/**
 * Runs `request` with a signal that also aborts — with a ConnectionClosed error, which the SDK rejects
 * the request with — when the response stream of the request it sends ends without the answer. The
 * caller's own abort passes through with its own reason.
 */
export async function watchStream<T>(
  signal: AbortSignal | undefined,
  request: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const forward = () => controller.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  try {
    return await watching.run(
      (error) => controller.abort(error),
      () => request(controller.signal),
    );
  } finally {
    signal?.removeEventListener('abort', forward);
  }
}
