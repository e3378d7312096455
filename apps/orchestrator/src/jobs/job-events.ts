import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RedisConnection, ToolCallOutcome } from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER, REDIS } from '../runtime/tokens.ts';
import { JobStore, type StoredEventInput } from './job-store.ts';

export type JobEventType =
  | 'status'
  | 'step'
  | 'tool_call.dispatched'
  | 'tool_call.finished'
  | 'message'
  /** A call waits for a person: a tool's question or an approval (docs/semantics.md §14–15). */
  | 'input_required'
  | 'input.answered';

/** The data of a `tool_call.finished` event (the ToolCallFinishedEvent schema) for a call's outcome. */
export function toolCallFinishedEvent(callId: string, tool: string, outcome: ToolCallOutcome) {
  return {
    id: callId,
    tool,
    server: outcome.server || undefined,
    status: outcome.status,
    executed: outcome.executed,
    attempts: outcome.attempts,
    queuedMs: outcome.queuedMs,
    runMs: outcome.runMs,
    // For a timeline: who ran it, and when it started and ended (ISO, like every API timestamp).
    ...(outcome.workerId ? { workerId: outcome.workerId } : {}),
    ...(outcome.startedAt ? { startedAt: new Date(outcome.startedAt).toISOString() } : {}),
    finishedAt: new Date(outcome.finishedAt).toISOString(),
  };
}

/** Told of each event this replica publishes (e.g. webhooks, which must not be imported from here). */
export type JobEventListener = (
  jobId: string,
  type: JobEventType,
  data: Record<string, unknown>,
) => Promise<void>;

/**
 * A job's progress: stored in PostgreSQL (so a late or reconnecting SSE client replays it) and
 * announced over Redis pub/sub (so the replica serving the stream hears about a run on another
 * replica). One subscriber connection per process, whatever the number of streams.
 */
@Injectable()
export class JobEvents implements OnModuleInit, OnModuleDestroy {
  private readonly local = new EventEmitter().setMaxListeners(0);
  private readonly subscriber: RedisConnection;
  private readonly channels: { events: string; cancel: string };
  private readonly listeners: JobEventListener[] = [];

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(REDIS) private readonly redis: RedisConnection,
    @Inject(ENV) env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.subscriber = redis.duplicate();
    this.channels = { events: `${env.prefix}:job-events`, cancel: `${env.prefix}:job-cancel` };
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (channel: string, jobId: string) => {
      if (channel === this.channels.events) this.local.emit(`event:${jobId}`);
      else if (channel === this.channels.cancel) this.local.emit('cancel', jobId);
    });
    await this.subscriber.subscribe(this.channels.events, this.channels.cancel);
  }

  async onModuleDestroy(): Promise<void> {
    this.local.removeAllListeners();
    this.subscriber.disconnect();
  }

  async publish(jobId: string, type: JobEventType, data: Record<string, unknown>): Promise<void> {
    try {
      await this.store.appendEvent(jobId, type, data);
      await this.redis.publish(this.channels.events, jobId);
    } catch (error) {
      // Progress events are for watchers; losing one must not fail the job they describe.
      this.log.warn({ job_id: jobId, type, err: error }, 'could not publish job event');
    }
    await this.tellListeners(jobId, type, data);
  }

  /**
   * Publishes an event that `write` stores together with the record it announces (one statement, see
   * JobStore.recordCall): the write's failure is the caller's, the announcement's is only logged.
   * A write that returns false stored nothing (e.g. the job had already ended): nothing is announced,
   * and the result is false.
   */
  async publishWith(
    jobId: string,
    type: JobEventType,
    data: Record<string, unknown>,
    // biome-ignore lint/suspicious/noConfusingVoidType: writes that always store return nothing
    write: (event: StoredEventInput) => Promise<boolean | void>,
  ): Promise<boolean> {
    if ((await write({ type, data })) === false) return false;
    await this.redis
      .publish(this.channels.events, jobId)
      .catch((error: unknown) =>
        this.log.warn({ job_id: jobId, type, err: error }, 'could not announce job event'),
      );
    await this.tellListeners(jobId, type, data);
    return true;
  }

  private async tellListeners(
    jobId: string,
    type: JobEventType,
    data: Record<string, unknown>,
  ): Promise<void> {
    for (const listener of this.listeners) {
      await listener(jobId, type, data).catch((error: unknown) =>
        this.log.error({ job_id: jobId, type, err: error }, 'a job event listener failed'),
      );
    }
  }

  /** `listener` hears every event published on this replica, after it is stored (or failed to be). */
  onPublished(listener: JobEventListener): void {
    this.listeners.push(listener);
  }

  /** Calls `listener` whenever new events of `jobId` may be in the store; returns the unsubscribe. */
  watch(jobId: string, listener: () => void): () => void {
    this.local.on(`event:${jobId}`, listener);
    return () => this.local.off(`event:${jobId}`, listener);
  }

  async announceCancel(jobId: string): Promise<void> {
    await this.redis.publish(this.channels.cancel, jobId);
  }

  onCancel(listener: (jobId: string) => void): void {
    this.local.on('cancel', listener);
  }
}
