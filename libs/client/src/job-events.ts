import { EventSourceParserStream } from 'eventsource-parser/stream';
import { SwitchyardApiError, SwitchyardConnectionError } from './errors.ts';
import type { components } from './schema.ts';
import { FINAL_JOB_STATUSES } from './types.ts';

type Schemas = components['schemas'];

/** The events of `GET /v1/jobs/:id/events`, typed by the component schemas of the OpenAPI document. */
export type KnownJobEvent =
  | { id: string; event: 'status'; data: Schemas['JobStatusEvent'] }
  | { id: string; event: 'step'; data: Schemas['JobStepEvent'] }
  | { id: string; event: 'message'; data: Schemas['JobMessageEvent'] }
  | { id: string; event: 'tool_call.dispatched'; data: Schemas['ToolCallDispatchedEvent'] }
  | { id: string; event: 'tool_call.finished'; data: Schemas['ToolCallFinishedEvent'] }
  | { id: string; event: 'tool_call.progress'; data: Schemas['ToolCallProgressEvent'] };
/** An event this client does not know (a newer API): passed on, named, with its data. */
export type OtherJobEvent = { id: string; event: 'other'; name: string; data: unknown };
export type JobEvent = KnownJobEvent | OtherJobEvent;

const KNOWN_EVENTS: ReadonlySet<string> = new Set<KnownJobEvent['event']>([
  'status',
  'step',
  'message',
  'tool_call.dispatched',
  'tool_call.finished',
  'tool_call.progress',
]);

export function isFinalEvent(event: JobEvent): boolean {
  return event.event === 'status' && FINAL_JOB_STATUSES.has(event.data.status);
}

/** The events of one connection, until the server ends it (it does after the final status) or it drops. */
export async function* parseJobEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<JobEvent> {
  const messages = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of messages) {
    // Comments (keep-alives) and nameless messages carry nothing of the job.
    if (!message.event) continue;
    const data: unknown = message.data ? JSON.parse(message.data) : null;
    yield KNOWN_EVENTS.has(message.event)
      ? ({ id: message.id ?? '', event: message.event, data } as KnownJobEvent)
      : { id: message.id ?? '', event: 'other', name: message.event, data };
  }
}

export interface FollowOptions {
  /** Resume after this event id (as a reconnecting client does); omitted: from the first event. */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Consecutive failed reconnects before giving up (default 20, about a minute and a half). */
  maxReconnects?: number;
  /** First wait before a reconnect, doubled after each failure up to 5 s (default 250 ms). */
  reconnectDelayMs?: number;
  /** Told before each reconnect: after which event, and why. */
  onReconnect?: (info: { attempt: number; lastEventId: string | undefined; reason: string }) => void;
}

/** What following needs of the API: one connection's events, and whether the job has ended. */
export interface JobEventSource {
  open(lastEventId: string | undefined, signal: AbortSignal | undefined): Promise<AsyncIterable<JobEvent>>;
  isFinal(signal: AbortSignal | undefined): Promise<boolean>;
}

const MAX_DELAY_MS = 5_000;

/**
 * Follows a job's events across dropped connections, resuming each time with Last-Event-ID (the
 * server replays what came after it), and ends after the final status. A connection that ends with
 * nothing new means the final status was already behind `lastEventId` when the job has ended; then
 * following ends too. An API error that retrying cannot cure (401, 404, …) is thrown at once.
 */
export async function* followJobEvents(source: JobEventSource, options: FollowOptions = {}) {
  const { signal, maxReconnects = 20, reconnectDelayMs = 250, onReconnect } = options;
  let lastEventId = options.lastEventId;
  let failures = 0;
  let serverRetryMs: number | undefined;
  for (;;) {
    let received = 0;
    let reason = 'the stream ended before the final status';
    try {
      const events = await source.open(lastEventId, signal);
      for await (const event of events) {
        received += 1;
        failures = 0;
        if (event.id) lastEventId = event.id;
        yield event;
        if (isFinalEvent(event)) return;
      }
      if (received === 0 && (await source.isFinal(signal))) return;
    } catch (error) {
      if (signal?.aborted || !retryable(error)) throw error;
      reason = error instanceof Error ? error.message : String(error);
      if (error instanceof SwitchyardApiError && error.retryAfterSeconds)
        serverRetryMs = error.retryAfterSeconds * 1000;
    }
    if (received === 0) failures += 1;
    if (failures > maxReconnects)
      throw new Error(`gave up following the job after ${maxReconnects} failed reconnects: ${reason}`);
    onReconnect?.({ attempt: failures, lastEventId, reason });
    const backoff = Math.min(MAX_DELAY_MS, reconnectDelayMs * 2 ** Math.max(0, failures - 1));
    await delay(received > 0 ? 0 : (serverRetryMs ?? backoff), signal);
    serverRetryMs = undefined;
  }
}

/** A dropped connection or a busy/unavailable server is worth a reconnect; a refusal is not. */
function retryable(error: unknown): boolean {
  if (error instanceof SwitchyardApiError) return error.status === 429 || error.status >= 500;
  if (error instanceof SwitchyardConnectionError) return true;
  // A stream cut mid-way surfaces as a TypeError ("terminated") or a socket error from the body read.
  return error instanceof TypeError || (error instanceof Error && 'code' in error);
}

/** setTimeout that an abort ends early (no node:timers: the client also runs in browsers). */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
