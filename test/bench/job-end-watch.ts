import { jobAnnouncements, type Store, type Unsubscribe } from '@switchyard/contracts';
import pg from 'pg';
import { z } from 'zod';
import type { Closable } from './harness.ts';

/** One ended job as its row in the job store has it (PostgreSQL's clock, for every job alike). */
export interface EndedJob {
  id: string;
  status: string;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
}

const FINAL = ['succeeded', 'completed_with_errors', 'failed', 'cancelled'];

const EndedRowSchema = z.object({
  id: z.string(),
  status: z.enum(FINAL),
  created_at: z.date(),
  started_at: z.date(),
  finished_at: z.date(),
});

/**
 * Tells when many jobs have ended without an SSE stream per job (a thousand streams would be work of the
 * orchestrator's, and more than `maxEventStreamsPerTeam`): it hears the replicas' own job announcements
 * (the same pub/sub the streams wake on) and reads the rows of the jobs announced since its last read in
 * one query. A job is read once when it is expected too, so one that ended before that is not missed.
 */
export class JobEndWatch implements Closable {
  private readonly pending = new Set<string>();
  private readonly announced = new Set<string>();
  private readonly ended = new Map<string, EndedJob>();
  private reading: Promise<void> | undefined;
  private failure: unknown;
  private wake: (() => void) | undefined;

  private constructor(
    private readonly client: pg.Client,
    private unsubscribe: Unsubscribe | undefined,
  ) {}

  /** Listens on `store`'s job announcements and reads the jobs of `schema` (the deployment's). */
  static async open(store: Store, databaseUrl: string, schema: string): Promise<JobEndWatch> {
    const client = new pg.Client({
      connectionString: databaseUrl,
      options: `-c search_path=${schema}`,
      application_name: 'switchyard-bench-job-end-watch',
    });
    await client.connect();
    const watch = new JobEndWatch(client, undefined);
    try {
      watch.unsubscribe = await jobAnnouncements(store).listen(
        { onEvent: (jobId) => watch.heard(jobId), onCancel: () => undefined },
        { connectionName: 'switchyard-bench-job-end-watch', onError: (error) => watch.fail(error) },
      );
    } catch (error) {
      await client.end();
      throw error;
    }
    return watch;
  }

  /** A job to wait for; read at once, in case its end was announced before it was known here. */
  expect(jobId: string): void {
    this.pending.add(jobId);
    this.heard(jobId);
  }

  /** Resolves with every expected job once all have ended; rejects past `timeoutMs` naming how many did not. */
  async allEnded(timeoutMs: number): Promise<EndedJob[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 || this.reading) {
      if (this.failure) throw this.failure;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `${this.pending.size} of ${this.pending.size + this.ended.size} jobs not ended in ${timeoutMs} ms`,
        );
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
    if (this.failure) throw this.failure;
    return [...this.ended.values()];
  }

  private heard(jobId: string): void {
    if (!this.pending.has(jobId)) return;
    this.announced.add(jobId);
    this.reading ??= this.readAnnounced().finally(() => {
      this.reading = undefined;
      this.wake?.();
    });
  }

  /** Reads the announced jobs until no announcement came in during the last read. */
  private async readAnnounced(): Promise<void> {
    while (this.announced.size > 0 && !this.failure) {
      const ids = [...this.announced];
      this.announced.clear();
      try {
        const { rows } = await this.client.query(
          'SELECT id, status, created_at, started_at, finished_at FROM jobs WHERE id = ANY($1::text[]) AND status = ANY($2::text[])',
          [ids, FINAL],
        );
        for (const row of rows) {
          const job = EndedRowSchema.parse(row);
          this.ended.set(job.id, {
            id: job.id,
            status: job.status,
            createdAt: job.created_at.getTime(),
            startedAt: job.started_at.getTime(),
            finishedAt: job.finished_at.getTime(),
          });
          this.pending.delete(job.id);
        }
      } catch (error) {
        this.fail(error);
      }
    }
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    this.wake?.();
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
    await this.reading;
    await this.client.end();
  }
}
