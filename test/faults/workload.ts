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

export interface PlannedJob {
  /** Idempotency-Key: a submission retried after a fault cannot create a second job. */
  key: string;
  body: unknown;
  calls: PlannedCall[];
}

/** Batches of 50 mixed calls, and agent jobs whose scripted turns write notes and record. */
export function planJobs(run: string): PlannedJob[] {
  const request = ({ tool, arguments: args }: PlannedCall) => ({ tool, arguments: args });
  const batches = Array.from({ length: BATCH_JOBS }, (_, job) => {
    const calls = Array.from({ length: CALLS_PER_BATCH }, (_, index) => plannedCall(job, index));
    return { key: `${run}-j${job}`, body: { kind: 'batch', calls: calls.map(request) }, calls };
  });
  const agents = Array.from({ length: AGENT_JOBS }, (_, agent) => {
    const job = BATCH_JOBS + agent;
    const turns = [0, 1, 2].map((turn) => [plannedCall(job, turn * 2), plannedCall(job, turn * 2 + 1)]);
    const script = [...turns.map((calls) => ({ toolCalls: calls.map(request) })), { final: 'done' }];
    return {
      key: `${run}-j${job}`,
      body: { kind: 'agent', input: 'work through the faults', model: { provider: 'scripted', script } },
      calls: turns.flat(),
    };
  });
  return [...batches, ...agents];
}

const SUBMIT_PATIENCE_MS = 60_000;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Submits jobs in the background through whichever replica is alive, so a submission that meets a
 * fault neither blocks the fault schedule nor gets lost: it is retried (same Idempotency-Key) for a
 * minute on connection errors, 429 and 5xx, and recorded as failed after that.
 */
export class Submitter {
  readonly planned = new Map<string, PlannedCall[]>();
  readonly ids: string[] = [];
  readonly failed: Array<{ key: string; error: string; tries: string[] }> = [];
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly api: () => ApiClient | undefined,
    private readonly onSubmitted: (id: string) => void,
  ) {}

  submit(jobs: PlannedJob[]): void {
    for (const job of jobs) this.pending.push(this.submitOne(job));
  }

  async drained(): Promise<void> {
    await Promise.all(this.pending);
  }

  private async submitOne(job: PlannedJob): Promise<void> {
    const until = Date.now() + SUBMIT_PATIENCE_MS;
    let error = 'not tried';
    // Every refusal, so that a job the API never took says what each try met, not only the last.
    const tries: string[] = [];
    while (Date.now() < until) {
      if (error !== 'not tried') tries.push(`${new Date().toISOString()} ${error.slice(0, 120)}`);
      const api = this.api();
      try {
        if (!api) throw new Error('no live orchestrator');
        const response = await Promise.race([
          api.submit(job.body, { 'idempotency-key': job.key }),
          delay(30_000).then(() => {
            throw new Error('no answer within 30 s');
          }),
        ]);
        if (response.status === 200 || response.status === 201) {
          const id = String(response.body.id);
          if (!this.planned.has(id)) {
            this.planned.set(id, job.calls);
            this.ids.push(id);
            this.onSubmitted(id);
          }
          return;
        }
        error = `HTTP ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`;
        if (response.status < 500 && response.status !== 429) break;
      } catch (failure) {
        error = (failure as Error).message;
      }
      // The back-off between retries while the API is unreachable, not a wait for a result.
      await delay(250);
    }
    this.failed.push({ key: job.key, error, tries: summarizeTries(tries) });
  }
}

/** The tries of a submission, the same refusal in a row counted once (a minute of 503s is one line). */
function summarizeTries(tries: string[]): string[] {
  const runs: Array<{ first: string; error: string; count: number }> = [];
  for (const line of tries) {
    const error = line.slice(line.indexOf(' ') + 1);
    const last = runs.at(-1);
    if (last?.error === error) last.count += 1;
    else runs.push({ first: line.slice(0, line.indexOf(' ')), error, count: 1 });
  }
  return runs.map((run) => `from ${run.first}: ${run.count}× ${run.error}`);
}
