/**
 * A call's MCP progress, thinned on its way: the worker relays at most one notification per call per
 * RELAYED_PROGRESS_INTERVAL_MS (a server that reports a thousand times a second must not flood the
 * store's channel), and the orchestrator stores at most one `tool_call.progress` event per call per
 * STORED_PROGRESS_INTERVAL_MS (docs/semantics.md §17).
 */
export const RELAYED_PROGRESS_INTERVAL_MS = 100;
export const STORED_PROGRESS_INTERVAL_MS = 500;

export interface ProgressThrottle<T> {
  /** A new notification: emitted at once when the last emit is an interval old, else held (newest wins). */
  push(value: T): void;
  /** Emits the held notification if there is one, then stops; resolves once every emit has finished. */
  close(): Promise<void>;
}

/**
 * At most one emit per `intervalMs`: the first notification goes out at once, later ones within the
 * interval are held and the newest is emitted when the interval is over, so the last progress before a
 * pause is never lost. Emits run one after another (their stored order is their order); an emit that
 * fails only loses that notification. Nothing is scheduled until a notification comes.
 */
export function progressThrottle<T>(
  emit: (value: T) => Promise<void>,
  intervalMs: number,
  now: () => number = Date.now,
): ProgressThrottle<T> {
  let lastEmitAt = Number.NEGATIVE_INFINITY;
  let held: { value: T } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let chain: Promise<void> = Promise.resolve();
  let closed = false;

  const send = (value: T) => {
    lastEmitAt = now();
    chain = chain.then(() => emit(value)).catch(() => undefined);
  };
  const sendHeld = () => {
    timer = undefined;
    if (!held) return;
    const { value } = held;
    held = undefined;
    send(value);
  };

  return {
    push(value) {
      if (closed) return;
      const wait = lastEmitAt + intervalMs - now();
      if (wait <= 0 && !timer) return send(value);
      held = { value };
      timer ??= setTimeout(sendHeld, Math.max(0, wait));
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      sendHeld();
      await chain;
    },
  };
}
