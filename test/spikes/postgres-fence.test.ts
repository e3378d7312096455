/**
 * Spike for issue 21 (docs/postgres-backend.md §3): the at-most-once fence of docs/semantics.md §3 as one
 * SQL statement on BullMQ 6.7's own PostgreSQL schema, against BullMQ's own stalled-job handling.
 *
 * Needs the machine's PostgreSQL (POSTGRES_SPIKE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test);
 * every run uses a fresh schema and drops it afterwards. No Redis is involved.
 */
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { createPostgresBackend, type Job, Queue, runMigrations, Worker, type WorkerOptions } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The system suites' database (test/support/deployment.ts): each run isolates itself in its own schema.
const URL =
  process.env.POSTGRES_SPIKE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `spike_fence_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/**
 * The fence (docs/postgres-backend.md §3): one statement. It writes the marker (when $4 is not null) and
 * extends the lock only while the row is `active` under this worker's token and carries no marker; the
 * outer SELECT says which check failed. $1 queue, $2 job id, $3 token, $4 marker (jsonb or null: check
 * the lock only), $5 lock duration ms, $6 now (the worker's Date.now(), the clock BullMQ's PG backend
 * stamps its own locks with). Result: 1 fenced, 0 lock not ours, 2 marker already there.
 */
const FENCE_SEND = `
WITH fenced AS (
  UPDATE job
     SET progress = COALESCE($4::jsonb, progress),
         locked_until_ms = $6::bigint + $5::bigint,
         stalled_marked = false
   WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3
     AND ($4::jsonb IS NULL
          OR NOT COALESCE(jsonb_typeof(progress) = 'object' AND progress ? 'dispatchedBy', false))
  RETURNING 1
)
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM fenced) THEN 1
  WHEN EXISTS (SELECT 1 FROM job WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3)
    THEN 2
  ELSE 0
END AS result`;

/**
 * The hold / lock take-back (semantics §4): keeps the lock while the row is still `active` under this
 * token. On PostgreSQL the token stays on the row after its lock expired until the stalled check moves
 * the job (it clears the token), so "merely expired, nobody took it" is the same row condition as
 * "held": no start count or list position is needed. $1 queue, $2 id, $3 token, $4 ms, $5 now.
 */
const HOLD_LOCK = `
UPDATE job SET locked_until_ms = $5::bigint + $4::bigint, stalled_marked = false
 WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3
RETURNING 1`;

type Fence = 'fenced' | 'lock_lost' | 'already_sent';

let admin: pg.Pool;
let sql: pg.Pool;
const closers: Array<() => Promise<unknown>> = [];

function connection() {
  return { connectionString: URL, schema: SCHEMA, max: 4 };
}

function track<T extends { close(): Promise<unknown> }>(closable: T): T {
  closers.push(() => closable.close());
  return closable;
}

function queue(name: string): Queue {
  return track(new Queue(name, { connection: connection() }, createPostgresBackend));
}

function worker(
  name: string,
  processor: (job: Job, token?: string) => Promise<unknown>,
  opts: Partial<WorkerOptions>,
) {
  const created = new Worker(name, processor, { connection: connection(), ...opts }, createPostgresBackend);
  created.on('error', () => undefined); // asserted through `events`, never an unhandled 'error'
  return track(created);
}

async function fence(
  queueName: string,
  id: string,
  token: string,
  marker: object | null,
  lockMs = 1500,
): Promise<Fence> {
  const { rows } = await sql.query<{ result: number }>(FENCE_SEND, [
    queueName,
    id,
    token,
    marker === null ? null : JSON.stringify(marker),
    lockMs,
    Date.now(),
  ]);
  return ({ 1: 'fenced', 2: 'already_sent', 0: 'lock_lost' } as const)[rows[0]?.result as 0 | 1 | 2];
}

async function hold(queueName: string, id: string, token: string, lockMs = 1500): Promise<boolean> {
  const { rowCount } = await sql.query(HOLD_LOCK, [queueName, id, token, lockMs, Date.now()]);
  return rowCount === 1;
}

async function row(queueName: string, id: string) {
  const { rows } = await sql.query<{
    state: string;
    lock_token: string | null;
    locked_until_ms: string | null;
    stalled_count: number;
    progress: unknown;
  }>(
    'SELECT state, lock_token, locked_until_ms, stalled_count, progress FROM job WHERE queue = $1 AND id = $2',
    [queueName, id],
  );
  return rows[0];
}

/** Resolves with the first emission of `event` whose arguments pass `match`; rejects after `ms`. */
function next<A extends unknown[]>(
  emitter: EventEmitter,
  event: string,
  match: (...args: A) => boolean = () => true,
  ms = 20_000,
): Promise<A> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no '${event}' within ${ms} ms`));
    }, ms);
    const listener = (...args: unknown[]) => {
      if (!match(...(args as A))) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args as A);
    };
    emitter.on(event, listener);
  });
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: URL, max: 1 });
  const client = await admin.connect();
  try {
    await runMigrations(client, SCHEMA);
  } finally {
    client.release();
  }
  sql = new pg.Pool({ connectionString: URL, max: 2, options: `-c search_path=${SCHEMA}` });
});

afterAll(async () => {
  // Every Queue and Worker, even when a test failed; then the schema.
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await sql?.end().catch(() => undefined);
  await admin?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => undefined);
  await admin?.end().catch(() => undefined);
});

describe("the fence on BullMQ's PostgreSQL backend", () => {
  it("writes the marker only under the job's lock token, and loses it to the stalled check's hand-over", async () => {
    const name = 'tools.{fence}';
    const q = queue(name);
    const aGot = deferred<{ job: Job; token: string }>();
    const releaseA = deferred();
    // A: never renews its lock (a frozen worker); its lock expires and the stalled check hands the job on.
    const a = worker(
      name,
      async (job, token) => {
        aGot.resolve({ job, token: token as string });
        await releaseA.promise;
        return 'A';
      },
      { lockDuration: 1500, stalledInterval: 500, skipLockRenewal: true, maxStalledCount: 5, concurrency: 1 },
    );
    await q.add('call', { n: 1 }, { jobId: 'call-1' });
    const { job, token: tokenA } = await aGot.promise;
    expect(tokenA).toBeTruthy();

    // Under A's lock: a wrong token fails, A's token writes the marker once.
    expect(await fence(name, 'call-1', 'not-the-token', { dispatchedBy: 'intruder' })).toBe('lock_lost');
    expect(await fence(name, 'call-1', tokenA, { dispatchedBy: 'worker-a', at: Date.now() })).toBe('fenced');
    expect(await fence(name, 'call-1', tokenA, { dispatchedBy: 'worker-a', at: Date.now() })).toBe(
      'already_sent',
    );
    expect(await fence(name, 'call-1', tokenA, null)).toBe('fenced'); // lock-only (idempotent call)
    expect((await row(name, 'call-1'))?.progress).toMatchObject({ dispatchedBy: 'worker-a' });

    // B arrives; A stays blocked without renewing. The stalled check (A's or B's: one shared throttle
    // in `meta`) marks the job on one pass and moves it to `waiting` on the next; B takes it.
    const bGot = deferred<{ job: Job; token: string }>();
    const releaseB = deferred();
    const b = worker(
      name,
      async (taken, token) => {
        bGot.resolve({ job: taken, token: token as string });
        await releaseB.promise;
        return 'B';
      },
      { lockDuration: 30_000, stalledInterval: 500, maxStalledCount: 5, concurrency: 1 },
    );
    const { job: jobB, token: tokenB } = await bGot.promise;
    expect(tokenB).not.toBe(tokenA);
    expect(jobB.id).toBe(job.id);
    // The marker crossed the hand-over in the job's progress: B's processor sees it when it picks the job up.
    expect(jobB.progress).toMatchObject({ dispatchedBy: 'worker-a' });
    const handedOver = await row(name, 'call-1');
    expect(handedOver).toMatchObject({ state: 'active', lock_token: tokenB, stalled_count: 1 });

    // A's token no longer holds anything: no fence, no hold (take-back), no extendLock; B's does.
    expect(await fence(name, 'call-1', tokenA, { dispatchedBy: 'worker-a-again' })).toBe('lock_lost');
    expect(await fence(name, 'call-1', tokenA, null)).toBe('lock_lost');
    expect(await hold(name, 'call-1', tokenA)).toBe(false);
    expect(await job.extendLock(tokenA, 1500)).toBe(0);
    expect(await fence(name, 'call-1', tokenB, null)).toBe('fenced');
    // …and B, finding A's marker, must not send again (it reports `indeterminate`).
    expect(await fence(name, 'call-1', tokenB, { dispatchedBy: 'worker-b' })).toBe('already_sent');
    expect(await hold(name, 'call-1', tokenB, 30_000)).toBe(true);

    // A wakes and finishes: BullMQ's move to completed checks the token and refuses it.
    const aError = next<[Error]>(a, 'error');
    releaseA.resolve();
    const [error] = await aError;
    expect(error.message).toMatch(/lock|not active/i);
    console.info(`A's late finish: ${error.message}`);
    expect((await row(name, 'call-1'))?.state).toBe('active');

    const completed = next<[Job, unknown]>(b, 'completed', (done) => done.id === 'call-1');
    releaseB.resolve();
    const [, result] = await completed;
    expect(result).toBe('B');
    expect((await q.getJob('call-1'))?.returnvalue).toBe('B');
  });

  it('takes back a lock that merely expired while nobody took the job (no stalled check ran)', async () => {
    const name = 'tools.{takeback}';
    const q = queue(name);
    const got = deferred<{ job: Job; token: string }>();
    const release = deferred();
    const w = worker(
      name,
      async (job, token) => {
        got.resolve({ job, token: token as string });
        await release.promise;
        return 'done';
      },
      { lockDuration: 1500, skipLockRenewal: true, skipStalledCheck: true, concurrency: 1 },
    );
    await q.add('call', {}, { jobId: 'call-1' });
    const { token } = await got.promise;
    // The lock's expiry, without waiting for it: what a frozen worker finds when it wakes.
    await sql.query(`UPDATE job SET locked_until_ms = 0 WHERE queue = $1 AND id = 'call-1'`, [name]);
    expect(await hold(name, 'call-1', token)).toBe(true);
    expect(Number((await row(name, 'call-1'))?.locked_until_ms)).toBeGreaterThan(Date.now());
    // The fence also passes on a merely expired lock (the same row condition), so it takes it back too.
    await sql.query(`UPDATE job SET locked_until_ms = 0 WHERE queue = $1 AND id = 'call-1'`, [name]);
    expect(await fence(name, 'call-1', token, { dispatchedBy: 'w' })).toBe('fenced');
    const completed = next<[Job, unknown]>(w, 'completed');
    release.resolve();
    expect((await completed)[1]).toBe('done');
  });

  it('reports a lock another owner holds as lockRenewalFailed; remove() refuses a locked job', async () => {
    const name = 'tools.{renewal}';
    const q = queue(name);
    const got = deferred<{ job: Job; token: string }>();
    const release = deferred();
    const w = worker(
      name,
      async (job, token) => {
        got.resolve({ job, token: token as string });
        await release.promise;
        return 'done';
      },
      { lockDuration: 1000, skipStalledCheck: true, concurrency: 1 },
    );
    await q.add('call', {}, { jobId: 'call-1' });
    await got.promise;

    // remove() of an active, locked job: refused, the job stays.
    const removed = await q.remove('call-1').then(
      (n) => ({ n }),
      (error: Error) => ({ error: error.message }),
    );
    expect(removed).not.toEqual({ n: 1 });
    console.info(`remove() of a locked job: ${JSON.stringify(removed)}`);
    expect((await row(name, 'call-1'))?.state).toBe('active');

    // Job progress writes (the marker's column on Redis too): plain, unfenced, as on Redis.
    await (await q.getJob('call-1'))?.updateProgress({ note: 'progress' });
    expect((await row(name, 'call-1'))?.progress).toEqual({ note: 'progress' });

    // Someone else's token on the row: the next renewal (every lockDuration / 2) fails and says so.
    const failed = next<[string[]]>(w, 'lockRenewalFailed');
    await sql.query(`UPDATE job SET lock_token = 'someone-else' WHERE queue = $1 AND id = 'call-1'`, [name]);
    const [ids] = await failed;
    expect(ids).toContain('call-1');
    release.resolve();
  });
});

describe("BullMQ's PostgreSQL backend: what Switchyard's serialization relies on", () => {
  it("judges lock expiry on the checking host's clock: a stalled check from a host 400 s ahead takes a healthy worker's job", async () => {
    const name = 'tools.{skew}';
    const q = queue(name);
    const got = deferred<{ job: Job; token: string }>();
    const release = deferred();
    // A healthy worker: a 30 s lock, renewed every 15 s; it runs no stalled check of its own.
    const w = worker(
      name,
      async (job, token) => {
        got.resolve({ job, token: token as string });
        await release.promise;
        return 'done';
      },
      { lockDuration: 30_000, skipStalledCheck: true, concurrency: 1 },
    );
    await q.add('call', {}, { jobId: 'call-1' });
    const { token } = await got.promise;
    // Exactly what BullMQ's PG Worker sends from a host whose Date.now() is 400 s ahead (two passes:
    // mark, then sweep; stalledInterval 0 so the shared throttle lets the second pass through).
    const ahead = Date.now() + 400_000;
    await sql.query('SELECT id FROM move_stalled_jobs_to_wait($1, 1, $2, 0) AS t(id)', [name, ahead]);
    const { rows } = await sql.query<{ id: string }>(
      'SELECT id FROM move_stalled_jobs_to_wait($1, 1, $2, 0) AS t(id)',
      [name, ahead + 1],
    );
    expect(rows.map((r) => r.id)).toEqual(['call-1']);
    expect(await row(name, 'call-1')).toMatchObject({ state: 'waiting', lock_token: null });
    // The owner, still running, is now fenced off: its token holds nothing.
    expect(await fence(name, 'call-1', token, { dispatchedBy: 'w' })).toBe('lock_lost');
    release.resolve();
    await next(w, 'error');
  });

  it('runs a job scheduler (the retention sweep) on the PG backend', async () => {
    const name = '{job-retention}';
    const q = queue(name);
    await q.upsertJobScheduler('sweep', { every: 300 }, { name: 'sweep', data: { kind: 'retention' } });
    expect(await q.getJobScheduler('sweep')).toMatchObject({ key: 'sweep' });
    const ran = deferred<Job>();
    worker(
      name,
      async (job) => {
        ran.resolve(job);
      },
      { concurrency: 1 },
    );
    const job = await ran.promise;
    expect(job.data).toEqual({ kind: 'retention' });
    await q.removeJobScheduler('sweep');
  });

  it('global concurrency 1 holds across two workers, and priorities order the waiting calls', async () => {
    const name = 'tools.{serial}';
    const q = queue(name);
    await q.setGlobalConcurrency(1);
    expect(await q.getGlobalConcurrency()).toBe(1);
    await q.pause();
    const total = 20;
    // Added in reverse priority: the lowest number runs first (BullMQ priority, fair share's lever).
    for (let i = 0; i < total; i += 1) {
      await q.add('call', { i }, { jobId: `call-${i}`, priority: total - i });
    }
    let inFlight = 0;
    let most = 0;
    const order: number[] = [];
    const byWorker: Record<string, number> = { a: 0, b: 0 };
    const all = deferred();
    const half = deferred();
    let done = 0;
    const processor = (who: 'a' | 'b') => async (job: Job) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      order.push(job.data.i as number);
      byWorker[who] = (byWorker[who] ?? 0) + 1;
      if (order.length === total / 2) half.resolve();
      await new Promise((resolve) => setTimeout(resolve, 15)); // the call's own work
      inFlight -= 1;
      return who;
    };
    const opts = { concurrency: 4, drainDelay: 1 } as const;
    const a = worker(name, processor('a'), opts);
    const b = worker(name, processor('b'), opts);
    for (const w of [a, b]) {
      w.on('completed', () => {
        done += 1;
        if (done === total) all.resolve();
      });
    }
    await Promise.all([a.waitUntilReady(), b.waitUntilReady()]);
    // At resume all 8 fetch slots of both workers race for the first call. A worker's finish claims its
    // next call in the same transaction, so the one that won keeps the queue while it is busy: half-way,
    // A stops taking calls (close: it finishes its call, fetches no next one) and B has to take over.
    await q.resume();
    await half.promise;
    const first = order.length;
    const winner = byWorker.a > 0 ? a : b;
    const closing = winner.close();
    await all.promise;
    await closing;
    expect(first).toBe(total / 2);
    expect(byWorker.a).toBeGreaterThan(0);
    expect(byWorker.b).toBeGreaterThan(0);
    expect(most).toBe(1);
    expect(order).toEqual([...Array(total).keys()].reverse());
    expect(await q.getJobCounts('completed', 'active', 'waiting')).toEqual({
      completed: 20,
      active: 0,
      waiting: 0,
    });
    console.info(`global concurrency spike: calls per worker ${JSON.stringify(byWorker)}`);
  });
});
