import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  isCallLog,
  type ProgressRelayChannel,
  progressRelayChannel,
  type RelayedCallMessage,
  type Store,
  type ToolCallLog,
  type ToolCallProgress,
  type Unsubscribe,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER, STORE } from '../runtime/tokens.ts';

/**
 * The MCP progress notifications workers relay for every call (ProgressRelayChannel: Redis pub/sub or
 * PostgreSQL NOTIFY), handed to whoever on this replica waits for that call: the call's life cycle
 * (its `tool_call.progress` events) and the /mcp request that made it; and, on the same channel, the
 * log messages of calls whose /mcp client asked for them (`onLog`). One subscriber connection per
 * process; a call nobody here waits for costs an emit without listeners.
 */
@Injectable()
export class ProgressListener implements OnModuleInit, OnModuleDestroy {
  private readonly local = new EventEmitter().setMaxListeners(0);
  private readonly relay: ProgressRelayChannel;
  private unsubscribe: Unsubscribe | undefined;

  constructor(
    @Inject(STORE) store: Store,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.relay = progressRelayChannel(store);
  }

  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.relay.subscribe(
      (message: RelayedCallMessage) =>
        this.local.emit(
          `${isCallLog(message) ? 'log' : 'progress'}\0${key(message.queue, message.id)}`,
          message,
        ),
      {
        connectionName: `switchyard-orchestrator-${this.env.replicaId}-progress`,
        onError: (error) => this.log.warn({ err: error }, 'progress subscriber error'),
      },
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.local.removeAllListeners();
    await this.unsubscribe?.();
  }

  /** Calls `listener` with each progress notification of one queued call; returns the unsubscribe. */
  on(queue: string, bullId: string, listener: (progress: ToolCallProgress) => void): () => void {
    return this.listen(`progress\0${key(queue, bullId)}`, listener);
  }

  /** Calls `listener` with each relayed log message of one queued call; returns the unsubscribe. */
  onLog(queue: string, bullId: string, listener: (message: ToolCallLog) => void): () => void {
    return this.listen(`log\0${key(queue, bullId)}`, listener);
  }

  private listen<T>(event: string, listener: (message: T) => void): () => void {
    this.local.on(event, listener);
    return () => this.local.off(event, listener);
  }
}

const key = (queue: string, id: string) => `${queue}\0${id}`;
