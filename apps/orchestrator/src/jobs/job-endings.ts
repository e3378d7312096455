import { Inject, Injectable } from '@nestjs/common';
import { OrchestratorMetrics } from '../metrics/orchestrator-metrics.ts';
import { JobEvents } from './job-events.ts';
import type { EndStatus } from './job-request.ts';
import { type JobRecord, JobStore } from './job-store.ts';

/**
 * How every job ends, whichever door ran it (agent and batch runs, /mcp): the final status and its
 * `status` event in one statement (JobStore.finish), counted once. The first ending wins; a later one
 * (a replica that lost the run, a retried /mcp request) changes nothing and returns false.
 */
@Injectable()
export class JobEndings {
  constructor(
    @Inject(JobStore) private readonly store: JobStore,
    @Inject(JobEvents) private readonly events: JobEvents,
    @Inject(OrchestratorMetrics) private readonly metrics: OrchestratorMetrics,
  ) {}

  async end(job: JobRecord, status: EndStatus, result: unknown, error?: string): Promise<boolean> {
    const data = { status, ...(error ? { error } : {}) };
    const ended = await this.events.publishWith(job.id, 'status', data, (event) =>
      this.store.finish(job.id, status, result, error, event),
    );
    if (ended) this.metrics.jobEnded(job, status);
    return ended;
  }
}
