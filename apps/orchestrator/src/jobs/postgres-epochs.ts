import type pg from 'pg';
import type { EpochSlots } from './queue-epochs.ts';

/**
 * The slot's epoch, created as $2 when absent, in one statement. The outer SELECT reads the statement's
 * snapshot, which cannot see the CTE's own insert (hence the UNION) nor a row another replica committed
 * while this insert waited on it (then no row: read again).
 */
export const EPOCH_OF_SQL = `
  WITH created AS (
    INSERT INTO epoch (tag, epoch) VALUES ($1, $2) ON CONFLICT (tag) DO NOTHING RETURNING epoch
  )
  SELECT epoch FROM created
  UNION ALL
  SELECT epoch FROM epoch WHERE tag = $1
  LIMIT 1`;

/**
 * Epochs as rows of the queue schema's `epoch` table (docs/postgres-backend.md §2): they go with the
 * queues when the schema is dropped or restored, and only then.
 */
export class PostgresEpochSlots implements EpochSlots {
  constructor(private readonly pool: pg.Pool) {}

  async epochOf(tag: string, candidate: string): Promise<string> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { rows } = await this.pool.query<{ epoch: string }>(EPOCH_OF_SQL, [tag, candidate]);
      const epoch = rows[0]?.epoch;
      if (epoch) return epoch;
    }
    throw new Error(
      `the queue epoch of ${tag} was not there after three reads that each should have made it`,
    );
  }
}
