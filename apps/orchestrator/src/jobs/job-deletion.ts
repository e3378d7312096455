import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { Inject, Injectable } from '@nestjs/common';
import { CHECKPOINTER } from '../checkpoints/checkpointer.ts';
import { JobStore } from './job-store.ts';

/**
 * Deletes ended jobs for good: the LangGraph checkpoints (thread id = job id) first, then the row,
 * whose tool calls and events go with it (ON DELETE CASCADE). In that order, a failure half-way
 * leaves a job without its transcript, never checkpoints nobody can find again.
 */
@Injectable()
export class JobDeletion {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(CHECKPOINTER) private readonly checkpointer: BaseCheckpointSaver,
  ) {}

  /** One team's ended job: `deleted`, the status that keeps it (not ended), or undefined (no such job). */
  async deleteOne(id: string, team: string) {
    const job = await this.store.getForTeam(id, team);
    if (!job) return undefined;
    if (job.finishedAt === null) return job.status;
    await this.checkpointer.deleteThread(id);
    return this.store.deleteFinished(id, team);
  }

  /** Ended jobs by id (retention): returns how many rows went. */
  async deleteEnded(ids: string[]): Promise<number> {
    for (const id of ids) await this.checkpointer.deleteThread(id);
    return this.store.deleteEnded(ids);
  }
}
