import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { withMigrationLock } from '../runtime/database.ts';
import { BatchedPostgresSaver } from './batched-postgres-saver.ts';

export const CHECKPOINTER = Symbol('Checkpointer');

/** LangGraph checkpoints in the deployment's schema; thread id = job id. Writes batched (batched-postgres-saver.ts). */
export async function createCheckpointer(pool: pg.Pool, schema: string): Promise<PostgresSaver> {
  const saver = new BatchedPostgresSaver(pool, { schema });
  // setup() migrates the checkpoint tables; replicas starting together must not race on it.
  await withMigrationLock(pool, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await saver.setup();
  });
  return saver;
}
