import type { ToolFilter } from '../../catalog/model-tool-catalog.ts';
import type { JobRecord } from '../../jobs/job-store.ts';
import type { Logger } from '../../runtime/logger.ts';

/** What every step of one run needs to know about the job it works for. */
export interface RunContext {
  job: JobRecord;
  /** The team's tool filter, then the job's own. */
  filters: ToolFilter[];
  signal: AbortSignal;
  log: Logger;
}
