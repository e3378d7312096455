import { bullmqBinding, type OutcomeNotice, outcomeNotices, type Store } from '@switchyard/contracts';
import { Queue, QueueEvents } from 'bullmq';

/**
 * A suite's own hands on a deployment's queues, the same on either store: BullMQ's Queue and QueueEvents
 * built as the apps build them (`bullmqBinding`), the outcome notices through their port, and the two
 * writes no BullMQ API offers (ageing a finished job, marking a stalled one), one statement per store.
 */

/** A Queue on `store`; the caller closes it. */
export function queueOn(store: Store, name: string): Queue {
  const binding = bullmqBinding(store);
  return new Queue(name, binding.options, binding.factory as never);
}

/**
 * QueueEvents on `store`; the caller closes it. On Redis it gets a connection of its own (a blocking
 * XREAD must not hold the shared one), which `close()` also ends; on PostgreSQL the store's pool.
 */
export function queueEventsOn(store: Store, name: string): QueueEvents {
  if (store.kind === 'redis') {
    const connection = store.redis.duplicate();
    const events = new QueueEvents(name, { connection, prefix: store.prefix });
    const close = events.close.bind(events);
    events.close = async () => {
      await close();
      await connection.quit().catch(() => connection.disconnect());
    };
    return events;
  }
  const binding = bullmqBinding(store);
  return new QueueEvents(name, binding.options, binding.factory as never);
}

/** BullMQ's finish time on PostgreSQL, the score of the completed set on Redis: what age-based removal reads. */
const AGE_COMPLETED_SQL = `UPDATE job SET finished_at_ms = $3 WHERE queue = $1 AND id = $2 AND state = 'completed'`;
/** What BullMQ's stalled check writes on a job stalled more than maxStalledCount times (Redis: the `defa` field). */
const DEFER_FAILURE_SQL = 'UPDATE job SET deferred_failure = $3 WHERE queue = $1 AND id = $2';

/** Sets a completed job's finish time to `finishedAt` (epoch ms); returns how many jobs changed (0 or 1). */
export async function setCompletedAt(
  store: Store,
  queue: Queue,
  id: string,
  finishedAt: number,
): Promise<number> {
  if (store.kind === 'redis') {
    const completed = queue.keys.completed;
    if (!completed) throw new Error(`queue ${queue.name} has no completed-set key on Redis`);
    return Number(await store.redis.zadd(completed, 'XX', 'CH', finishedAt, id));
  }
  return (await store.pool.query(AGE_COMPLETED_SQL, [queue.name, id, finishedAt])).rowCount ?? 0;
}

/** Marks a job as BullMQ's stalled check marks one stalled too often: the next worker to take it fails it for good. */
export async function markDeferredFailure(
  store: Store,
  queue: Queue,
  id: string,
  reason: string,
): Promise<void> {
  if (store.kind === 'redis') {
    await store.redis.hset(queue.toKey(id), 'defa', reason);
    return;
  }
  const { rowCount } = await store.pool.query(DEFER_FAILURE_SQL, [queue.name, id, reason]);
  if (rowCount !== 1) throw new Error(`no job ${id} in queue ${queue.name} to mark with a deferred failure`);
}

/**
 * Every outcome notice announced on `store` from `start()` on. `settled()` is the barrier a count needs:
 * it announces a marker of its own and resolves once the marker was read, so every notice announced before
 * the call (notices are read in order) is in `notices` by then. The marker names no queue job, so no
 * orchestrator has a waiter for it.
 */
export class NoticeLog {
  readonly notices: OutcomeNotice[] = [];
  private stop: (() => Promise<void>) | undefined;
  private readonly markers = new Map<string, () => void>();
  private errors: unknown[] = [];

  constructor(private readonly store: Store) {}

  async start(): Promise<void> {
    this.stop = await outcomeNotices(this.store).listen(
      (notice) => {
        const marked = this.markers.get(notice.id);
        if (notice.queue === MARKER_QUEUE && marked) marked();
        else this.notices.push(notice);
      },
      (error) => this.errors.push(error),
    );
  }

  /** Resolves once every notice announced before this call has been read. */
  async settled(timeoutMs = 30_000): Promise<void> {
    const id = `marker-${Math.random().toString(36).slice(2)}`;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.markers.set(id, resolve);
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `the outcome notice marker ${id} was not read within ${timeoutMs} ms (reader errors: ${this.errors.map(String).join('; ') || 'none'})`,
              ),
            ),
          timeoutMs,
        );
        outcomeNotices(this.store).announce({ queue: MARKER_QUEUE, id, outcome: '{}' }).catch(reject);
      });
    } finally {
      clearTimeout(timer);
      this.markers.delete(id);
    }
  }

  /** How many notices were read for the queue job `id` of `queue`. */
  count(queue: string, id: string): number {
    return this.notices.filter((notice) => notice.queue === queue && notice.id === id).length;
  }

  async close(): Promise<void> {
    await this.stop?.();
  }
}

const MARKER_QUEUE = 'test-notice-marker';
