import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph';
import { type ChannelVersions, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';

type PendingWrite = [string, unknown];
type SaverOptions = NonNullable<ConstructorParameters<typeof PostgresSaver>[2]>;

/**
 * The LangGraph Postgres checkpointer, writing each checkpoint and each task's writes in one statement.
 *
 * The library writes every channel blob and every pending write as its own statement inside its own
 * transaction: ≈ 27 round trips per agent step, three quarters of the orchestrator's queries per step
 * (docs/capacity.md, "Where the time goes"). Here the rows go as arrays through `unnest` and the blobs
 * ride in a CTE of the checkpoint's insert: one statement, so still all or nothing. Serialization,
 * tables, conflict rules and every read are the library's own; the checkpointer validation suite of
 * `@langchain/langgraph-checkpoint-validation` holds this class to LangGraph's contract.
 */
export class BatchedPostgresSaver extends PostgresSaver {
  private readonly batchPool: pg.Pool;
  private readonly statements: { put: string; upsertWrites: string; insertWrites: string };

  constructor(pool: pg.Pool, options: SaverOptions & { schema: string }) {
    super(pool, undefined, options);
    this.batchPool = pool;
    const schema = `"${options.schema.replaceAll('"', '""')}"`;
    const writes = `INSERT INTO ${schema}.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::bytea[])
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)`;
    this.statements = {
      put: `WITH blobs AS (
          INSERT INTO ${schema}.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[])
          ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
        )
        INSERT INTO ${schema}.checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
        VALUES ($7, $8, $9, $10, $11, $12)
        ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
        DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`,
      upsertWrites: `${writes} DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`,
      insertWrites: `${writes} DO NOTHING`,
    };
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable;
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    await this.batchPool.query(this.statements.put, [
      ...columns(blobs, 6),
      thread_id,
      checkpoint_ns,
      checkpoint.id,
      checkpoint_id,
      this._dumpCheckpoint(checkpoint),
      serializedMetadata,
    ]);
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    // The library upserts when every write is a special channel (error, interrupt …) and keeps the first
    // write otherwise; one statement must not touch a row twice, so the rows are made unique the same way.
    const upsert = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const rows = await this._dumpWrites(
      config.configurable?.thread_id,
      config.configurable?.checkpoint_ns,
      config.configurable?.checkpoint_id,
      taskId,
      writes,
    );
    const byKey = new Map<number, (typeof rows)[number]>();
    for (const row of rows) if (upsert || !byKey.has(row[4])) byKey.set(row[4], row);
    if (byKey.size === 0) return;
    await this.batchPool.query(upsert ? this.statements.upsertWrites : this.statements.insertWrites, [
      ...columns([...byKey.values()], 8),
    ]);
  }
}

/** Rows → one array per column, for `unnest`. */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, column) => rows.map((row) => row[column] ?? null));
}
