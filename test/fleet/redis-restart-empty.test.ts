import { redisKeys, ServerCatalogEntrySchema, toolQueueName } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SuiteContention } from '../support/contention.ts';
import { exampleServer, FAST_WORKER_SETTINGS, Fleet } from '../support/fleet.ts';
import { type Interval, overlaps } from '../support/intervals.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const CALLS = 12;
/** "Within a few heartbeats", with room for a loaded 2-core machine. */
const RESTORED_WITHIN_MS = 20 * FAST_WORKER_SETTINGS.heartbeatMs;

/** The notes ledger as one interval per add_note call (its start and done rows), sorted by start. */
function noteIntervals(path: string, label: string): Interval[] {
  const rows = readLedger(path).filter((row) => String(row.text).startsWith(label));
  const started = new Map(rows.filter((row) => row.phase === 'start').map((row) => [row.text, row.time]));
  return rows
    .filter((row) => row.phase === 'done')
    .map((row) => ({
      label: String(row.text),
      start: Date.parse(String(started.get(row.text))),
      end: Date.parse(String(row.time)),
    }))
    .sort((a, b) => a.start - b.start);
}

/**
 * Issue 20 items 2 and 3: a Redis without persistence is SIGKILLed and comes back empty on the same
 * port. What the workers wrote once (the tool list, the queue's `concurrency: 1`) must come back by
 * itself, or calls end `unavailable` and a serialized server runs calls side by side.
 */
describe('Redis restarted empty under a running fleet', () => {
  const redis = new DedicatedRedis({ persistent: false });
  let fleet: Fleet;
  let queue: Queue;

  const contention = new SuiteContention('redis restarted empty (fleet)');

  beforeAll(async () => {
    await contention.start();
    await redis.start();
    fleet = new Fleet(
      'redis-restart',
      (dir) => ({
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, concurrency: 1 }),
      }),
      {},
      {},
      redis.url,
    );
    await Promise.all([fleet.startWorker({ id: 'w-one' }), fleet.startWorker({ id: 'w-two' })]);
    queue = new Queue(toolQueueName('notes'), { connection: fleet.redis, prefix: fleet.prefix });
  });

  afterAll(async () => {
    await contention.stop();
    await queue?.close();
    await fleet?.close();
    await redis.stop();
  });

  it('re-publishes the tool list and re-sets concurrency 1, and serialized calls stay serialized', async () => {
    const dispatcher = await fleet.dispatcher();
    expect(await queue.getGlobalConcurrency()).toBe(1);
    const probe = `${fleet.prefix}:probe`;
    await fleet.redis.set(probe, 'written before the crash');

    await redis.crashAndRestart();
    const restartedAt = Date.now();
    // Empty indeed (the workers may have re-written their part already).
    expect(await fleet.redis.get(probe)).toBeNull();

    // (a) the catalog entry is back, written by one of the workers that already had the list.
    await vi.waitFor(
      async () => {
        const raw = await fleet.redis.hget(redisKeys.catalog(fleet.prefix), 'notes');
        expect(raw).not.toBeNull();
        const entry = ServerCatalogEntrySchema.parse(JSON.parse(raw as string));
        expect(entry.tools.map((tool) => tool.name)).toContain('add_note');
      },
      { timeout: RESTORED_WITHIN_MS, interval: 50 },
    );
    // (b) the fleet-wide limit is back (soft: the overlaps below are the point, report them too).
    const limit = await vi
      .waitFor(
        async () => {
          const found = await queue.getGlobalConcurrency();
          expect(found).toBe(1);
          return found;
        },
        { timeout: RESTORED_WITHIN_MS, interval: 50 },
      )
      .catch(() => queue.getGlobalConcurrency());
    expect.soft(limit).toBe(1);
    console.info(`catalog and concurrency restored ${Date.now() - restartedAt} ms after the restart`);

    // (c) calls dispatched now run one at a time across both workers.
    await fleet.sessionState('notes', 'ready');
    const outcomes = await Promise.all(
      Array.from({ length: CALLS }, (_, index) =>
        dispatcher.dispatch({
          jobId: 'after-restart',
          toolCallId: `note-${index}`,
          server: 'notes',
          tool: 'add_note',
          arguments: { text: `after restart ${index}`, delayMs: 150 },
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(outcomes.map(() => 'ok'));
    const takenBy = (worker: string) => outcomes.filter((outcome) => outcome.workerId === worker).length;
    console.info(`calls taken: w-one ${takenBy('w-one')}, w-two ${takenBy('w-two')}`);

    const ran = noteIntervals(fleet.path('notes.jsonl'), 'after restart');
    expect(ran).toHaveLength(CALLS);
    console.info(`overlapping executions after the restart: ${overlaps(ran).length}`);
    expect(overlaps(ran)).toEqual([]);
  });
});
