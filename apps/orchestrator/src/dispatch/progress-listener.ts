import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type ProgressRelayChannel,
  progressRelayChannel,
  type Store,
  type ToolCallProgress,
  type Unsubscribe,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER, STORE } from '../runtime/tokens.ts';

/**
 * The MCP progress notifications workers relay for every call (ProgressRelayChannel: Redis pub/sub or
 * PostgreSQL NOTIFY), handed to whoever on this replica waits for that call: the call's life cycle
 * (its `tool_call.progress` events) and the /mcp request that made it. One subscriber connection per
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
      (progress) => this.local.emit(key(progress.queue, progress.id), progress),
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
    this.local.on(key(queue, bullId), listener);
    return () => this.local.off(key(queue, bullId), listener);
  }
}

const key = (queue: string, id: string) => `${queue}\0${id}`;
