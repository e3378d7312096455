import { OUTCOME_STATUSES, type ToolCallOutcome } from '@switchyard/contracts';
import { z } from 'zod';
import type { InputRecord } from './input-store.ts';
import type { ToolCallRecord } from './job-store.ts';

/**
 * Where a call stands and what its time went on, as the job view shows it: the truthful state (a call
 * held for a person was never sent), each attempt a worker made, and each wait for a person.
 */

const Timestamp = z.iso.datetime().meta({ example: '2026-12-01T01:30:00.000Z' });
const iso = (date: Date | number): string => new Date(date).toISOString();

/** The states of a call without an outcome (JobStore's OPEN_CALL_STATES, as the API names them). */
export const OPEN_TOOL_CALL_STATES = [
  'admitted',
  'awaiting_approval',
  'awaiting_input',
  'dispatched',
] as const;

export const ToolCallStateSchema = z.enum([...OPEN_TOOL_CALL_STATES, ...OUTCOME_STATUSES]).meta({
  id: 'ToolCallState',
  description:
    'While the call has no outcome: `admitted` (known, not sent yet), `awaiting_approval` (a gated call waits for a person’s decision; nothing was sent), `awaiting_input` (the tool asked a question; the call waits for the answer), `dispatched` (on its server’s queue or running). Once it has one: the outcome status (docs/semantics.md §17)',
});

export const AttemptViewSchema = z
  .object({
    attempt: z.int().min(1),
    workerId: z.string().nullable(),
    pickedUpAt: Timestamp.meta({ description: 'When a worker took the call off its queue' }),
    startedAt: Timestamp.nullable().meta({
      description: 'When the request went to the server; null: never sent',
    }),
    finishedAt: Timestamp,
    error: z
      .string()
      .nullable()
      .meta({ description: 'Why the attempt failed (and was retried, if another follows)' }),
  })
  .meta({
    id: 'ToolCallAttempt',
    description:
      'One attempt of the call: the gap before the first pickedUpAt is queue wait, the gaps between attempts are retry backoff',
  });

export const WaitViewSchema = z
  .object({
    kind: z.enum(['approval', 'question']),
    askedAt: Timestamp,
    answeredAt: Timestamp.nullable().meta({
      description: 'When a person answered or decided; null while open or after it expired',
    }),
    expiresAt: Timestamp,
    state: z.enum(['pending', 'answered', 'expired']),
  })
  .meta({
    id: 'ToolCallWait',
    description: 'A time the call waited for a person (docs/semantics.md §14–15)',
  });

type AttemptView = z.output<typeof AttemptViewSchema>;
type WaitView = z.output<typeof WaitViewSchema>;

/**
 * The call's state. An open approval or question of a call without an outcome decides it whatever the
 * column says (a row written before the column knew these states says `dispatched`).
 */
export function toolCallState(call: ToolCallRecord, waits: WaitView[]): z.output<typeof ToolCallStateSchema> {
  if (call.outcome) return call.outcome.status;
  const open = waits.find((wait) => wait.state === 'pending');
  if (open) return open.kind === 'approval' ? 'awaiting_approval' : 'awaiting_input';
  const column = OPEN_TOOL_CALL_STATES.find((state) => state === call.status);
  return column ?? 'dispatched';
}

/**
 * The worker's attempts, oldest first. An outcome without the log (stored before workers kept one)
 * gives one attempt from its start and end; one decided without a worker has none.
 */
export function attemptViews(outcome: ToolCallOutcome | null): AttemptView[] {
  if (!outcome) return [];
  if (outcome.attemptLog)
    return outcome.attemptLog.map((attempt) => ({
      attempt: attempt.attempt,
      workerId: attempt.workerId ?? null,
      pickedUpAt: iso(attempt.pickedUpAt),
      startedAt: attempt.startedAt ? iso(attempt.startedAt) : null,
      finishedAt: iso(attempt.finishedAt),
      error: attempt.error ?? null,
    }));
  if (!outcome.startedAt) return [];
  return [
    {
      attempt: Math.max(outcome.attempts, 1),
      workerId: outcome.workerId ?? null,
      pickedUpAt: iso(outcome.startedAt),
      startedAt: iso(outcome.startedAt),
      finishedAt: iso(outcome.finishedAt),
      error: outcome.status === 'ok' ? null : (outcome.error ?? null),
    },
  ];
}

/** The job's questions and approvals, grouped by call (from the rows the view already read). */
export function waitsByCall(inputs: InputRecord[]): Map<string, WaitView[]> {
  const byCall = new Map<string, WaitView[]>();
  for (const input of inputs) {
    const wait: WaitView = {
      kind: input.kind,
      askedAt: iso(input.createdAt),
      answeredAt: input.state === 'answered' && input.decidedAt ? iso(input.decidedAt) : null,
      expiresAt: iso(input.expiresAt),
      state: input.state,
    };
    byCall.set(input.toolCallId, [...(byCall.get(input.toolCallId) ?? []), wait]);
  }
  return byCall;
}
