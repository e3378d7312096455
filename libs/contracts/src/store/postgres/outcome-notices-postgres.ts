import { type OutcomeNotice, OutcomeNoticeSchema } from '../../outcome-notice.ts';
import type { OutcomeNotices, StopReading } from '../outcome-notices.ts';
import type { PostgresStore } from '../store.ts';
import { notificationChannel } from './notification-channel.ts';
import { NotificationListener } from './notification-listener.ts';

/** The notice and its wake-up in one statement: a notice is never stored without telling the readers. */
export const ANNOUNCE_OUTCOME_SQL = `
  WITH notice AS (INSERT INTO outcome_notice (body) VALUES ($1::jsonb) RETURNING id)
  SELECT pg_notify($2, id::text) FROM notice`;

/** Where a new reader starts: the current end, like XREAD's `$`. */
export const OUTCOME_END_SQL = 'SELECT COALESCE(max(id), 0)::text AS id FROM outcome_notice';

/** Notices after the cursor, plus those whose ids were skipped but may still commit (see `gaps`). */
export const READ_OUTCOMES_SQL = `
  SELECT id::text AS id, body FROM outcome_notice
   WHERE id > $1::bigint OR id = ANY($2::bigint[])
   ORDER BY id LIMIT $3`;

/**
 * Both of the stream's bounds: older than $1 ms on the database's clock, or beyond the last $2. The
 * first fresh row is found by walking the primary key from the oldest, so only the rows to delete are
 * scanned.
 */
export const SWEEP_OUTCOMES_SQL = `
  DELETE FROM outcome_notice
   WHERE id < GREATEST(
     COALESCE(
       (SELECT id FROM outcome_notice
         WHERE created_at_ms >= (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1
         ORDER BY id LIMIT 1),
       (SELECT max(id) + 1 FROM outcome_notice)),
     (SELECT max(id) FROM outcome_notice) - $2 + 1)`;

/** The Redis stream's cap (by length), kept as a second bound next to the age. */
const KEEP_NOTICES = 50_000;
const KEEP_MS = 10 * 60_000;
const BATCH = 500;
const POLL_MS = 5_000;
const SWEEP_EVERY_MS = 60_000;
/**
 * A bigserial id is taken at INSERT and becomes visible at COMMIT, so a reader can see id 11 before
 * id 10 commits. An id skipped over is looked for again for this long; past it, it was rolled back (or
 * the reconcile rounds settle its waiter).
 */
const GAP_WAIT_MS = 30_000;
/** More missing ids in one jump than inserts can be in flight at once: not worth watching. */
const MAX_GAP = 1_000;

/**
 * OutcomeNotices on PostgreSQL: rows in `outcome_notice`, announced on `<schema>_outcomes`. A reader
 * LISTENs on its own connection and reads `id > cursor` on each wake-up (coalesced), every 5 s, and
 * after reconnecting, so a lost notification costs at most one poll interval.
 */
export class PostgresOutcomeNotices implements OutcomeNotices {
  private readonly channel: string;

  constructor(private readonly store: PostgresStore) {
    this.channel = notificationChannel(store.schema, 'outcomes');
  }

  async announce(notice: OutcomeNotice): Promise<void> {
    await this.store.pool.query(ANNOUNCE_OUTCOME_SQL, [
      JSON.stringify(OutcomeNoticeSchema.parse(notice)),
      this.channel,
    ]);
  }

  async listen(
    handler: (notice: OutcomeNotice) => void,
    onError: (error: unknown) => void,
  ): Promise<StopReading> {
    const reader = new OutcomeReader(this.store, handler, onError);
    // LISTEN before fixing the start: a notice committed in between is then both woken for and read.
    const listener = await NotificationListener.open({
      url: this.store.url,
      applicationName: `${this.store.applicationName}/outcomes`,
      channels: { [this.channel]: () => reader.wake() },
      onReconnected: () => reader.wake(),
      onError: (error, what) => onError(new Error(`outcome notices: ${what}`, { cause: error })),
    });
    try {
      await reader.start();
    } catch (error) {
      await listener.close();
      throw error;
    }
    return async () => {
      await reader.stop();
      await listener.close();
    };
  }
}

/** One replica's cursor over `outcome_notice`, read by one query at a time. */
class OutcomeReader {
  private cursor = 0n;
  /** Ids skipped over that may yet commit → when they were first missed. */
  private readonly gaps = new Map<bigint, number>();
  private running = false;
  private reading: Promise<void> | undefined;
  private again = false;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: PostgresStore,
    private readonly handler: (notice: OutcomeNotice) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  async start(): Promise<void> {
    const { rows } = await this.store.pool.query<{ id: string }>(OUTCOME_END_SQL);
    this.cursor = BigInt(rows[0]?.id ?? '0');
    this.running = true;
    this.timers = [
      setInterval(() => this.wake(), POLL_MS),
      setInterval(() => void this.sweep(), SWEEP_EVERY_MS),
    ];
    for (const timer of this.timers) timer.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const timer of this.timers) clearInterval(timer);
    await this.reading;
  }

  /** Reads now, or once more right after the read in progress: wake-ups never queue up. */
  wake(): void {
    if (!this.running) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.drain().finally(() => {
      this.reading = undefined;
    });
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      try {
        // A full batch means more may be waiting behind it.
        if ((await this.readBatch()) === BATCH) this.again = true;
      } catch (error) {
        // The next wake-up or poll tries again from the same cursor.
        this.onError(
          new Error(`could not read outcome notices: ${(error as Error).message}`, { cause: error }),
        );
      }
    } while (this.again && this.running);
  }

  private async readBatch(): Promise<number> {
    const now = Date.now();
    for (const [id, since] of this.gaps) if (now - since > GAP_WAIT_MS) this.gaps.delete(id);
    const { rows } = await this.store.pool.query<{ id: string; body: unknown }>(READ_OUTCOMES_SQL, [
      this.cursor.toString(),
      [...this.gaps.keys()].map(String),
      BATCH,
    ]);
    for (const row of rows) {
      if (!this.running) break;
      const id = BigInt(row.id);
      if (id > this.cursor) {
        if (id - this.cursor - 1n <= BigInt(MAX_GAP)) {
          for (let missing = this.cursor + 1n; missing < id; missing += 1n) this.gaps.set(missing, now);
        }
        this.cursor = id;
      } else {
        this.gaps.delete(id);
      }
      // A row that is not a notice is skipped: its waiter still settles in a reconcile round.
      const notice = OutcomeNoticeSchema.safeParse(row.body);
      if (notice.success) this.deliver(notice.data);
    }
    return rows.length;
  }

  private deliver(notice: OutcomeNotice): void {
    try {
      this.handler(notice);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Every replica sweeps now and then; the statement is idempotent and cheap. */
  private async sweep(): Promise<void> {
    try {
      await this.store.pool.query(SWEEP_OUTCOMES_SQL, [KEEP_MS, KEEP_NOTICES]);
    } catch (error) {
      this.onError(
        new Error(`could not sweep outcome notices: ${(error as Error).message}`, { cause: error }),
      );
    }
  }
}
