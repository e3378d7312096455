import {
  buildOutcome,
  type Executed,
  type OutcomeCall,
  type OutcomeStatus,
  type ToolCallOutcome,
  ToolCallOutcomeSchema,
} from '@switchyard/contracts';

export type LocalCall = OutcomeCall;

/** An outcome decided on the orchestrator side, without a worker (never sent, cancelled, lost). */
export function localOutcome(
  call: LocalCall,
  status: OutcomeStatus,
  text: string,
  error?: string,
  executed?: Executed,
  /** Now on the clock the call's enqueuedAt is on (ServerClock), for its queuedMs; default this host's. */
  now = Date.now(),
): ToolCallOutcome {
  return ToolCallOutcomeSchema.parse(
    buildOutcome(call, { status, text, ...(error ? { error } : {}), ...(executed ? { executed } : {}) }, now),
  );
}
