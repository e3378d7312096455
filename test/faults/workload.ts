import type { ApiClient } from '../support/api-client.ts';

export const BATCH_JOBS = 60;
export const CALLS_PER_BATCH = 50;
export const AGENT_JOBS = 12;

export type Kind = 'serial' | 'pair' | 'note' | 'search';
export interface PlannedCall {
  kind: Kind;
  tool: string;
  /** Unique per planned call: the servers copy it into their ledgers. */
  label: string;
  arguments: Record<string, unknown>;
}

/** Call i of job j: a deterministic mix of idempotent and non-idempotent calls over four servers. */
export function plannedCall(job: number, index: number): PlannedCall {
  const label = `j${job}-c${index}`;
  switch ((job + index) % 4) {
    case 0:
      // A few serial calls outlast a worker's lock, so a frozen worker can be caught with one running.
      return {
        kind: 'serial',
        tool: 'rec-serial__record',
        label,
        arguments: { ms: index === 12 && job % 6 === 0 ? 2_500 : 2, label },
      };
    case 1:
      return { kind: 'pair', tool: 'rec-pair__record', label, arguments: { ms: 4, label } };
    case 2:
      // Some writes are held open for a while, so a killed or frozen worker can catch one mid-call.
      return {
        kind: 'note',
        tool: 'notes__add_note',
        label,
        arguments: index % 8 === 2 ? { text: label, delayMs: 150 } : { text: label },
      };
    default:
      return { kind: 'search', tool: 'search__search', label, arguments: { query: `queue ${index}` } };
  }
}

export interface Workload {
  ids: string[];
  /** The calls each job was given, in order. */
  planned: Map<string, PlannedCall[]>;
}

/** Batches of 50 mixed calls, and agent jobs whose scripted turns write notes and record. */
export async function submitWorkload(api: ApiClient): Promise<Workload> {
  const planned = new Map<string, PlannedCall[]>();
  const submit = async (body: unknown, calls: PlannedCall[]) => {
    const response = await api.submit(body);
    if (response.status !== 201)
      throw new Error(`submit: HTTP ${response.status} ${JSON.stringify(response.body)}`);
    planned.set(response.body.id, calls);
    return response.body.id as string;
  };
  const request = ({ tool, arguments: args }: PlannedCall) => ({ tool, arguments: args });
  const ids = await Promise.all([
    ...Array.from({ length: BATCH_JOBS }, (_, job) => {
      const calls = Array.from({ length: CALLS_PER_BATCH }, (_, index) => plannedCall(job, index));
      return submit({ kind: 'batch', calls: calls.map(request) }, calls);
    }),
    ...Array.from({ length: AGENT_JOBS }, (_, agent) => {
      const job = BATCH_JOBS + agent;
      const turns = [0, 1, 2].map((turn) => [plannedCall(job, turn * 2), plannedCall(job, turn * 2 + 1)]);
      const script = [...turns.map((calls) => ({ toolCalls: calls.map(request) })), { final: 'done' }];
      return submit(
        { kind: 'agent', input: 'work through the faults', model: { provider: 'scripted', script } },
        turns.flat(),
      );
    }),
  ]);
  return { ids, planned };
}
