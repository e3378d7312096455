import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from '@langchain/langgraph';
import type { RunLease } from '../../tool-calls/call-lease.ts';

type ListOptions = Parameters<BaseCheckpointSaver['list']>[1];
type ChannelVersions = Parameters<BaseCheckpointSaver['put']>[3];
type PendingWrites = Parameters<BaseCheckpointSaver['putWrites']>[1];

/**
 * The run's checkpointer, writing only while this replica holds the run. A replica that wakes up
 * after a freeze must not append its own branch to a thread another replica has continued: the next
 * resume (and the transcript) would read whichever checkpoint is newest. Reads are not fenced.
 *
 * The check and the write are two steps: a replica frozen exactly between them can still write once.
 * That checkpoint would repeat a step the holder also takes, from the same recorded outcomes.
 */
export class FencedCheckpointer extends BaseCheckpointSaver {
  constructor(
    private readonly inner: BaseCheckpointSaver,
    private readonly lease: RunLease,
  ) {
    super(inner.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.inner.getTuple(config);
  }

  list(config: RunnableConfig, options?: ListOptions): AsyncGenerator<CheckpointTuple> {
    return this.inner.list(config, options);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    await this.lease.confirm();
    return this.inner.put(config, checkpoint, metadata, newVersions);
  }

  async putWrites(config: RunnableConfig, writes: PendingWrites, taskId: string, taskPath?: string) {
    await this.lease.confirm();
    return this.inner.putWrites(config, writes, taskId, taskPath);
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }
}
