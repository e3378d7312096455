import { Module } from '@nestjs/common';
import type pg from 'pg';
import type { OrchestratorEnv } from '../runtime/orchestrator-env.ts';
import { ENV, PG_POOL } from '../runtime/tokens.ts';
import { CHECKPOINTER, createCheckpointer } from './checkpointer.ts';
import { TranscriptReader } from './transcript-reader.ts';

/** The LangGraph checkpointer, shared by the runner (writes) and the jobs API (reads transcripts). */
@Module({
  providers: [
    {
      provide: CHECKPOINTER,
      inject: [PG_POOL, ENV],
      useFactory: (pool: pg.Pool, env: OrchestratorEnv) => createCheckpointer(pool, env.databaseSchema),
    },
    TranscriptReader,
  ],
  exports: [CHECKPOINTER, TranscriptReader],
})
export class CheckpointModule {}
