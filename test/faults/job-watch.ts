import pg from 'pg';
import type { ApiClient, Json } from '../support/api-client.ts';
import type { StreamEnd } from './promises.ts';

const FINAL = new Set(['succeeded', 'completed_with_errors', 'failed', 'cancelled']);
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows every job's event stream until its final status, through whichever replica is alive:
 * a stream cut by a killed replica or an outage is reopened on another. Tracks how many jobs are
 * still open, so each fault can say whether it hit a busy system.
 */
export class JobWatch {
  readonly final = new Set<string>();
  readonly ids: string[] = [];
  private stopped = false;
  private readonly watchers: Promise<void>[] = [];

  constructor(private readonly api: () => ApiClient | undefined) {}

  add(id: string): void {
    this.ids.push(id);
    this.watchers.push(this.follow(id));
  }

  get open(): number {
    return this.ids.length - this.final.size;
  }

  /** Resolves when every job is final, `ms` passed or `hopeless` resolved; returns the ids still open. */
  async settle(ms: number, hopeless: Promise<void>): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.watchers),
      hopeless,
      new Promise((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
    clearTimeout(timer);
    this.stopped = true;
    return this.ids.filter((id) => !this.final.has(id));
  }

  private async follow(id: string): Promise<void> {
    while (!this.stopped) {
      const api = this.api();
      try {
        if (!api) throw new Error('no live orchestrator');
        const events = await api.events(id, undefined, 20_000);
        const last = events.at(-1);
        if (last?.event === 'status' && FINAL.has(String(last.data.status))) {
          this.final.add(id);
          return;
        }
      } catch {
        // a replica died or the stream timed out: reopen (below) on whichever replica is alive
      }
      // Not a wait for a result: the back-off between reconnects while no replica answers.
      await delay(250);
    }
  }
}

/**
 * For each job the watch never saw final but `jobs` (the API) shows final: the status its event stream
 * ends with, read once more now that the run is over. A job final without its final status event leaves
 * every follower of its stream waiting.
 */
export async function streamEnds(
  api: ApiClient | undefined,
  jobs: Json[],
  open: string[],
): Promise<StreamEnd[]> {
  const ends: StreamEnd[] = [];
  for (const id of open) {
    const status = jobs.find((job) => job.id === id)?.status;
    if (!FINAL.has(String(status))) continue;
    const end: StreamEnd = { job: id, status: String(status) };
    try {
      if (!api) throw new Error('no live orchestrator');
      const events = await api.events(id, undefined, 20_000);
      const statuses = events.filter((event) => event.event === 'status').map((event) => event.data.status);
      const last = statuses.at(-1);
      if (last !== undefined) end.streamEndsWith = String(last);
    } catch (error) {
      end.unreadable = error instanceof Error ? error.message : String(error);
    }
    ends.push(end);
  }
  return ends;
}

/**
 * Every job as `GET /v1/jobs/:id` shows it, through a live replica; straight from the deployment's
 * PostgreSQL schema when no replica answers (so a diagnosis is possible even when all of them died).
 */
export async function readJobs(
  ids: string[],
  api: ApiClient | undefined,
  database: { url: string; schema: string },
): Promise<{ jobs: Json[]; source: 'api' | 'postgres' }> {
  if (api) {
    try {
      return { jobs: await Promise.all(ids.map((id) => api.job(id))), source: 'api' };
    } catch {
      // fall through to the database
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const jobs = await client.query(
      `SELECT id, status, error FROM ${database.schema}.jobs WHERE id = ANY($1)`,
      [ids],
    );
    const calls = await client.query(
      `SELECT job_id, tool_call_id, model_tool, arguments, status, outcome FROM ${database.schema}.tool_calls
       WHERE job_id = ANY($1) ORDER BY position, tool_call_id`,
      [ids],
    );
    return {
      source: 'postgres',
      jobs: jobs.rows.map((job) => ({
        ...job,
        toolCalls: calls.rows
          .filter((call) => call.job_id === job.id)
          .map((call) => ({
            id: call.tool_call_id,
            tool: call.model_tool,
            arguments: call.arguments,
            status: call.status,
            outcome: call.outcome,
          })),
      })),
    };
  } finally {
    await client.end();
  }
}
