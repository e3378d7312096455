import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type JobAnnouncements,
  jobAnnouncements,
  type Store,
  type ToolCallOutcome,
  type Unsubscribe,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER, STORE } from '../runtime/tokens.ts';
import { JobStore, type StoredEventInput } from './job-store.ts';

export type JobEventType =
  | 'status'
  | 'step'
  | 'tool_call.dispatched'
  | 'tool_call.finished'
  /** A running call's latest MCP progress, throttled; only the newest per call is kept (semantics.md). */
  | 'tool_call.progress'
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
 * announced between replicas (JobAnnouncements: Redis pub/sub or PostgreSQL NOTIFY, so the replica
 * serving the stream hears about a run on another replica). One subscriber connection per process,
 * whatever the number of streams.
 */
@Injectable()
export class JobEvents implements OnModuleInit, OnModuleDestroy {
  private readonly local = new EventEmitter().setMaxListeners(0);
  private readonly announcements: JobAnnouncements;
  private unsubscribe: Unsubscribe | undefined;
  private readonly listeners: JobEventListener[] = [];

  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(STORE) queueStore: Store,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.announcements = jobAnnouncements(queueStore);
  }

  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.announcements.listen(
      {
        onEvent: (jobId) => this.local.emit(`event:${jobId}`),
        onCancel: (jobId) => this.local.emit('cancel', jobId),
        // Announcements of the gap are lost: every stream re-reads the store, in case it missed one.
        onResumed: () => {
          for (const name of this.local.eventNames()) {
            if (typeof name === 'string' && name.startsWith('event:')) this.local.emit(name);
          }
        },
      },
      {
        connectionName: `switchyard-orchestrator-${this.env.replicaId}-job-events`,
        onError: (error) => this.log.warn({ err: error }, 'job announcement subscriber error'),
      },
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.local.removeAllListeners();
    await this.unsubscribe?.();
  }

  async publish(jobId: string, type: JobEventType, data: Record<string, unknown>): Promise<void> {
    try {
      await this.store.appendEvent(jobId, type, data);
      await this.announcements.announce(jobId);
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
    await this.announcements
      .announce(jobId)
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
    await this.announcements.cancel(jobId);
  }

  onCancel(listener: (jobId: string) => void): void {
    this.local.on('cancel', listener);
  }
}
