import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { withMigrationLock } from '../runtime/database.ts';

export const CHECKPOINTER = Symbol('Checkpointer');

/** LangGraph checkpoints in the deployment's schema; thread id = job id. */
export async function createCheckpointer(pool: pg.Pool, schema: string): Promise<PostgresSaver> {
  const saver = new PostgresSaver(pool, undefined, { schema });
  // setup() migrates the checkpoint tables; replicas starting together must not race on it.
  await withMigrationLock(pool, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await saver.setup();
  });
  return saver;
}
