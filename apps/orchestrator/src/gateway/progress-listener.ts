import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type RedisConnection,
  redisKeys,
  type ToolCallProgress,
  ToolCallProgressSchema,
} from '@switchyard/contracts';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, LOGGER, REDIS } from '../runtime/tokens.ts';

/**
 * Progress notifications workers relay for calls made through /mcp (redisKeys.progress), handed to the
 * request on this replica that waits for that call. One subscriber connection per process.
 */
@Injectable()
export class ProgressListener implements OnModuleInit, OnModuleDestroy {
  private readonly local = new EventEmitter().setMaxListeners(0);
  private readonly subscriber: RedisConnection;
  private readonly channel: string;

  constructor(
    @Inject(REDIS) redis: RedisConnection,
    @Inject(ENV) env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {
    this.subscriber = redis.duplicate();
    this.channel = redisKeys.progress(env.prefix);
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('error', (error) => this.log.warn({ err: error }, 'redis progress subscriber error'));
    this.subscriber.on('message', (_channel: string, message: string) => {
      const parsed = ToolCallProgressSchema.safeParse(parseJson(message));
      if (parsed.success) this.local.emit(key(parsed.data.queue, parsed.data.id), parsed.data);
    });
    await this.subscriber.subscribe(this.channel);
  }

  async onModuleDestroy(): Promise<void> {
    this.local.removeAllListeners();
    this.subscriber.disconnect();
  }

  /** Calls `listener` with each progress notification of one queued call; returns the unsubscribe. */
  on(queue: string, bullId: string, listener: (progress: ToolCallProgress) => void): () => void {
    this.local.on(key(queue, bullId), listener);
    return () => this.local.off(key(queue, bullId), listener);
  }
}

const key = (queue: string, id: string) => `${queue}\0${id}`;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
