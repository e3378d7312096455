import type pg from 'pg';
import { POSTGRES_NOW_MS } from '../store/postgres/database-clock.ts';
import type { LatencySamples, LatencyWindow, ToolLatencies } from './latency-samples.ts';

/**
 * Inserts one sample and reads both windows back in one statement. The reads see the statement's
 * snapshot, without the CTE's new row: it is added to each window by hand before the LIMIT.
 * $1 server, $2 tool, $3 duration (ms), $4 windowSamples, $5 windowMs.
 */
export const RECORD_SAMPLE_SQL = `
WITH clock AS (SELECT ${POSTGRES_NOW_MS} AS now_ms),
added AS (
  INSERT INTO latency_sample (server, tool, finished_at_ms, ms)
  SELECT $1, $2, clock.now_ms, $3 FROM clock
  RETURNING finished_at_ms, ms
)
SELECT
  ARRAY(SELECT recent.ms FROM (
          SELECT finished_at_ms, ms FROM added
          UNION ALL
          (SELECT s.finished_at_ms, s.ms FROM latency_sample s, clock
            WHERE s.server = $1 AND s.tool = $2 AND s.finished_at_ms >= clock.now_ms - $5::bigint
            ORDER BY s.finished_at_ms DESC LIMIT $4)
        ) AS recent ORDER BY recent.finished_at_ms DESC LIMIT $4) AS tool,
  ARRAY(SELECT recent.ms FROM (
          SELECT finished_at_ms, ms FROM added
          UNION ALL
          (SELECT s.finished_at_ms, s.ms FROM latency_sample s, clock
            WHERE s.server = $1 AND s.finished_at_ms >= clock.now_ms - $5::bigint
            ORDER BY s.finished_at_ms DESC LIMIT $4)
        ) AS recent ORDER BY recent.finished_at_ms DESC LIMIT $4) AS server`;

/**
 * The server's window (tool NULL) and each named tool's. $1 server, $2 windowSamples, $3 windowMs,
 * $4 tools.
 */
export const READ_SAMPLES_SQL = `
WITH clock AS (SELECT ${POSTGRES_NOW_MS} AS now_ms)
SELECT NULL::text AS tool,
       ARRAY(SELECT s.ms FROM latency_sample s, clock
              WHERE s.server = $1 AND s.finished_at_ms >= clock.now_ms - $3::bigint
              ORDER BY s.finished_at_ms DESC LIMIT $2) AS durations
UNION ALL
SELECT wanted.tool,
       ARRAY(SELECT s.ms FROM latency_sample s, clock
              WHERE s.server = $1 AND s.tool = wanted.tool AND s.finished_at_ms >= clock.now_ms - $3::bigint
              ORDER BY s.finished_at_ms DESC LIMIT $2)
  FROM (SELECT DISTINCT unnest($4::text[]) AS tool) AS wanted`;

/**
 * Deletes what no window can count any more: the server's samples past the window's age, and the tool's
 * beyond its newest windowSamples. The latter are outside the server's window too (the tool alone has
 * windowSamples newer ones). $1 server, $2 tool, $3 windowSamples, $4 windowMs.
 */
export const TRIM_SAMPLES_SQL = `
DELETE FROM latency_sample
 WHERE server = $1
   AND (finished_at_ms < ${POSTGRES_NOW_MS} - $4::bigint
        OR (tool = $2 AND finished_at_ms < (
              SELECT finished_at_ms FROM latency_sample
               WHERE server = $1 AND tool = $2
               ORDER BY finished_at_ms DESC OFFSET $3::int - 1 LIMIT 1)))`;

/** A tool's samples are trimmed at most this often per process: reads never depend on it. */
const TRIM_EVERY_MS = 60_000;

/** Rows of latency_sample, one per `ok` call, stamped on the database's clock. */
export class PostgresLatencySamples implements LatencySamples {
  private readonly trimmedAt = new Map<string, number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly onTrimError: (error: unknown) => void = () => undefined,
  ) {}

  async record(
    server: string,
    tool: string,
    durationMs: number,
    window: LatencyWindow,
  ): Promise<ToolLatencies> {
    const { rows } = await this.pool.query<ToolLatencies>(RECORD_SAMPLE_SQL, [
      server,
      tool,
      Math.max(0, Math.round(durationMs)),
      window.windowSamples,
      window.windowMs,
    ]);
    this.trimNowAndThen(server, tool, window);
    return { tool: rows[0]?.tool ?? [], server: rows[0]?.server ?? [] };
  }

  async read(
    server: string,
    tools: readonly string[],
    { windowSamples, windowMs }: LatencyWindow,
  ): Promise<{ server: number[]; tools: number[][] }> {
    const { rows } = await this.pool.query<{ tool: string | null; durations: number[] }>(READ_SAMPLES_SQL, [
      server,
      windowSamples,
      windowMs,
      tools,
    ]);
    const byTool = new Map(rows.map((row) => [row.tool, row.durations]));
    return { server: byTool.get(null) ?? [], tools: tools.map((tool) => byTool.get(tool) ?? []) };
  }

  private trimNowAndThen(server: string, tool: string, { windowSamples, windowMs }: LatencyWindow): void {
    const key = `${server}\0${tool}`;
    const now = Date.now();
    if (now - (this.trimmedAt.get(key) ?? 0) < TRIM_EVERY_MS) return;
    this.trimmedAt.set(key, now);
    this.pool.query(TRIM_SAMPLES_SQL, [server, tool, windowSamples, windowMs]).catch(this.onTrimError);
  }
}
