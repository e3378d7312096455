import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AGENT_RUNS_QUEUE, bullmqBinding, type Store } from '@switchyard/contracts';
import { Queue } from 'bullmq';
import { STORE } from '../runtime/tokens.ts';

export interface AgentRunData {
  jobId: string;
}

/** The `agent-runs` queue every orchestrator replica consumes; its job id is the job's id. */
@Injectable()
export class AgentRunQueue implements OnModuleDestroy {
  readonly queue: Queue<AgentRunData>;

  constructor(@Inject(STORE) store: Store) {
    const binding = bullmqBinding(store);
    this.queue = new Queue<AgentRunData>(AGENT_RUNS_QUEUE, binding.options, binding.factory as never);
  }

  /** `delayMs`: the run waits delayed that long first, as a parked run does (its earliest expiry). */
  async enqueue(jobId: string, options: { delayMs?: number } = {}): Promise<void> {
    await this.queue.add(
      'run',
      { jobId },
      {
        jobId,
        ...(options.delayMs && options.delayMs > 0 ? { delay: options.delayMs } : {}),
        // A run that fails for infrastructure reasons (database down, replica lost) is retried; the
        // checkpoint and the deterministic tool-call ids make a retry resume, not repeat.
        attempts: 5,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: 24 * 3600 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    );
  }

  /**
   * Wakes a run parked on a person (delayed until its earliest expiry) now: the answer it waited for
   * is in. A run not delayed is running or queued already and sees the answer itself.
   */
  async wake(jobId: string): Promise<void> {
    const job = await this.queue.getJob(jobId);
    if (!job || (await job.getState()) !== 'delayed') return;
    // Its own wake-up may have promoted it a moment ago: then it runs and sees the answer anyway.
    await job.promote().catch(async (error: unknown) => {
      if ((await job.getState()) === 'delayed') throw error;
    });
  }

  /** Drops a run that has not started yet. */
  async removeIfWaiting(jobId: string): Promise<void> {
    const state = await this.queue.getJobState(jobId);
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
      await this.queue.remove(jobId).catch(() => undefined);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
