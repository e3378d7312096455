import { Module } from '@nestjs/common';
import type pg from 'pg';
import type { Logger } from '../runtime/logger.ts';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { retryWhileDown } from '../runtime/retry-while-down.ts';
import { ENV, LOGGER, PG_POOL } from '../runtime/tokens.ts';
import { CHECKPOINTER, createCheckpointer } from './checkpointer.ts';
import { TranscriptReader } from './transcript-reader.ts';

/** The LangGraph checkpointer, shared by the runner (writes) and the jobs API (reads transcripts). */
@Module({
  providers: [
    {
      provide: CHECKPOINTER,
      inject: [PG_POOL, ENV, LOGGER],
      useFactory: (pool: pg.Pool, env: OrchestratorEnv, log: Logger) =>
        retryWhileDown(
          'setting up the checkpointer',
          () => createCheckpointer(pool, env.databaseSchema),
          log,
        ),
    },
    TranscriptReader,
  ],
  exports: [CHECKPOINTER, TranscriptReader],
})
export class CheckpointModule {}
