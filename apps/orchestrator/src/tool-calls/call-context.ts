import type { Span } from '@opentelemetry/api';
import type { LogLevel } from '@switchyard/contracts';
import type { ToolFilter } from '../catalog/model-tool-catalog.ts';
import type { JobRecord } from '../jobs/job-store.ts';
import type { Logger } from '../runtime/logger.ts';
import type { RunLease } from './call-lease.ts';

/**
 * What the life cycle of one call needs to know about the job it belongs to, whichever door made the
 * job: an agent run, a batch run, or a /mcp request (docs/architecture.md §3).
 */
export interface CallContext {
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
  /** This replica's hold on the work; lost when another replica takes it over. */
  lease: RunLease;
  /** `cancel` or the lease lost: the work stops here either way. */
  stop: AbortSignal;
  log: Logger;
  /** Epoch ms: the job's deadline, which no question or approval outlives. */
  deadlineAt: number;
  /**
   * What the caller can wait for a person on. An agent run parks on both; a /mcp request holds its
   * client while an approval is decided, but does not relay a tool's question (its call ends
   * `input_required` with the question); a batch job has no run to park, so a call needing approval is
   * never sent (`denied`) and a question ends the call `input_required`.
   */
  waits: { approval: boolean; question: boolean };
  /**
   * The least severe MCP log level of the server's messages the caller wants relayed (a /mcp client's
   * level); absent for every other door, so no log message of their calls leaves the worker.
   */
  logLevel?: LogLevel;
  /** Labels the caller adds to each dispatched call (e.g. the gateway's progress relay). */
  labels?: Record<string, string>;
  /**
   * The job's own span (the run, or the /mcp request's `mcp tools/call`): each call that does not end
   * `ok` marks it ERROR too (markJobCallOutcome), so a failed call is an error at every hop of its path.
   */
  span?: Span | undefined;
}
