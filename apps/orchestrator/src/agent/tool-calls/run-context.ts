import type { ToolFilter } from '../../catalog/model-tool-catalog.ts';
import type { JobRecord } from '../../jobs/job-store.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { RunLease } from '../runs/run-lease.ts';

/** What every step of one run needs to know about the job it works for. */
export interface RunContext {
  job: JobRecord;
  /** The team's tool filter, then the job's own. */
  filters: ToolFilter[];
  /**
   * Aborts on an explicit cancel or at the job's deadline: the only reasons a call may end
   * `cancelled`. Losing the run to another replica is not one of them (see `lease`).
   */
  cancel: AbortSignal;
  /** Why `cancel` aborted, as the dispatcher passes it to workers and outcomes (only once it has). */
  cancelReason: () => string;
  /** This replica's hold on the run; lost when another replica takes it over. */
  lease: RunLease;
  /** `cancel` or the lease lost: the run stops here either way. */
  stop: AbortSignal;
  log: Logger;
  /** Epoch ms: the job's deadline, which no question or approval outlives. */
  deadlineAt: number;
  /**
   * Agent runs park a call that waits for a person; a batch job has no run to park, so its calls end
   * `input_required` with the question, and a call needing approval is never sent (`denied`).
   */
  canWait: boolean;
}
