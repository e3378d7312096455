import { modelText, type ToolCallOutcome } from '@switchyard/contracts';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../src/jobs/job-store.ts';
import { jobView } from '../src/jobs/job-view.ts';
import { dropJobSchema, openJobSchema } from './fixtures/job-schema.ts';

/** Counts the statements sent through `pool.query` until stopped. */
function countQueries(pool: pg.Pool): { stop: () => number } {
  const query = pool.query.bind(pool);
  let count = 0;
  pool.query = ((...args: Parameters<typeof query>) => {
    count += 1;
    return query(...args);
  }) as typeof pool.query;
  return {
    stop: () => {
      pool.query = query;
      return count;
    },
  };
}

/** Real PostgreSQL, a fresh schema dropped afterwards. */
describe('JobStore', () => {
  let pool: pg.Pool;
  let schema: string;
  let store: JobStore;

  beforeAll(async () => {
    ({ pool, schema } = await openJobSchema('outcome'));
    store = new JobStore(pool);
    await createJob('job-big');
  });

  const createJob = (id: string) =>
    store.create(
      {
        id,
        team: 'alpha',
        kind: 'batch',
        request: { kind: 'batch', calls: [{ tool: 'search__search', arguments: {} }] },
        traceId: 't1',
        traceparent: '00-t1-s1-01',
        idempotencyKey: null,
        requestDigest: null,
      },
      100,
    );

  const statusEvents = async (jobId: string) =>
    (await store.eventsAfter(jobId, 0)).filter((event) => event.type === 'status').map((event) => event.data);

  afterAll(async () => {
    await dropJobSchema(pool, schema);
  });

  it('stores a big text result once and gives every reader its text', async () => {
    const big = 'x'.repeat(200_000);
    const outcome: ToolCallOutcome = {
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      server: 'search',
      tool: 'search',
      jobId: 'job-big',
      toolCallId: 'call-1',
      queuedMs: 1,
      runMs: 2,
      text: big,
      content: [{ type: 'text', text: big }],
      truncated: false,
      finishedAt: Date.now(),
    };
    await store.recordCall(
      {
        jobId: 'job-big',
        toolCallId: 'call-1',
        position: 0,
        modelTool: 'search__search',
        server: 'search',
        tool: 'search',
        arguments: {},
      },
      'dispatched',
    );
    await store.recordOutcome('job-big', 'call-1', outcome);

    const { rows } = await pool.query<{ bytes: number; hasText: boolean }>(
      `SELECT octet_length(outcome::text) AS bytes, outcome ? 'text' AS "hasText"
       FROM tool_calls WHERE job_id = 'job-big' AND tool_call_id = 'call-1'`,
    );
    expect(rows[0]?.hasText).toBe(false);
    expect(rows[0]?.bytes).toBeGreaterThan(big.length);
    expect(rows[0]?.bytes).toBeLessThan(big.length + 1_000);

    // The life cycle's read-back sees the derived text; the job view carries it once, in the content.
    const record = await store.toolCall('job-big', 'call-1');
    expect(record?.outcome?.text).toBe(big);
    const job = await store.get('job-big');
    const view = jobView(job as NonNullable<typeof job>, await store.toolCalls('job-big'), undefined);
    const shown = view.toolCalls[0]?.outcome;
    expect(shown?.text).toBeUndefined();
    expect(modelText(shown?.content ?? [])).toBe(big);
  });

  it('keeps the text of an outcome whose text is not its content', async () => {
    await store.recordCall(
      {
        jobId: 'job-big',
        toolCallId: 'call-2',
        position: 1,
        modelTool: 'search__search',
        server: 'search',
        tool: 'search',
        arguments: {},
      },
      'dispatched',
    );
    await store.recordOutcome('job-big', 'call-2', {
      status: 'timeout',
      executed: 'unknown',
      attempts: 1,
      server: 'search',
      tool: 'search',
      jobId: 'job-big',
      toolCallId: 'call-2',
      queuedMs: 0,
      runMs: 400,
      text: 'The call timed out after 400 ms.',
      content: [],
      truncated: false,
      finishedAt: Date.now(),
    });
    expect((await store.toolCall('job-big', 'call-2'))?.outcome?.text).toBe(
      'The call timed out after 400 ms.',
    );
  });

  // A call waiting for a person was shown `dispatched` though nothing was sent (issue 19, item 7), and a
  // re-run of the same call announced it again.
  it('moves a call through its states, announcing each change once and none after its outcome', async () => {
    await createJob('job-states');
    const call = {
      jobId: 'job-states',
      toolCallId: 'call-1',
      position: 0,
      modelTool: 'notes__add_note',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'A' },
    };
    const dispatched = { type: 'tool_call.dispatched', data: { id: 'call-1' } };
    expect(await store.recordCall(call, 'awaiting_approval')).toBe(true);
    expect((await store.toolCall('job-states', 'call-1'))?.status).toBe('awaiting_approval');
    expect(await store.recordCall(call, 'awaiting_approval')).toBe(false);
    expect(await store.recordCall(call, 'dispatched', dispatched)).toBe(true);
    expect(await store.recordCall(call, 'dispatched', dispatched)).toBe(false);
    expect((await store.toolCall('job-states', 'call-1'))?.status).toBe('dispatched');
    await store.recordOutcome('job-states', 'call-1', {
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      server: 'notes',
      tool: 'add_note',
      jobId: 'job-states',
      toolCallId: 'call-1',
      queuedMs: 0,
      runMs: 1,
      text: 'added',
      content: [],
      truncated: false,
      finishedAt: Date.now(),
    });
    // A late re-run (a replica that lost the run) moves nothing back.
    expect(await store.recordCall(call, 'awaiting_approval')).toBe(false);
    expect((await store.toolCall('job-states', 'call-1'))?.status).toBe('ok');
    const types = (await store.eventsAfter('job-states', 0)).map((event) => event.type);
    expect(types).toEqual(['tool_call.dispatched']);
  });

  it('keeps only the newest progress event of each running call, replayable after it, and none after its outcome', async () => {
    await createJob('job-progress');
    const call = (toolCallId: string) => ({
      jobId: 'job-progress',
      toolCallId,
      position: 0,
      modelTool: 'slow__sleep',
      server: 'slow',
      tool: 'sleep',
      arguments: { ms: 1_000 },
    });
    const progress = (toolCallId: string, value: number) => ({
      type: 'tool_call.progress',
      data: { toolCallId, server: 'slow', tool: 'sleep', progress: value, total: 10 },
    });
    await store.recordCall(call('call-1'), 'dispatched');
    await store.recordCall(call('call-2'), 'dispatched');
    const before = await store.newestEventId('job-progress');
    for (const value of [1, 2, 3])
      expect(await store.replaceCallProgress('job-progress', 'call-1', progress('call-1', value))).toBe(true);
    expect(await store.replaceCallProgress('job-progress', 'call-2', progress('call-2', 7))).toBe(true);
    const stored = await store.eventsAfter('job-progress', before);
    expect(stored.map((event) => [event.data.toolCallId, event.data.progress])).toEqual([
      ['call-1', 3],
      ['call-2', 7],
    ]);
    await store.recordOutcome('job-progress', 'call-1', {
      status: 'ok',
      executed: 'yes',
      attempts: 1,
      server: 'slow',
      tool: 'sleep',
      jobId: 'job-progress',
      toolCallId: 'call-1',
      queuedMs: 0,
      runMs: 1,
      text: 'slept',
      content: [],
      truncated: false,
      finishedAt: Date.now(),
    });
    // A notification that arrives after the outcome is not stored: the outcome ended the call's bar.
    expect(await store.replaceCallProgress('job-progress', 'call-1', progress('call-1', 9))).toBe(false);
    const after = await store.eventsAfter('job-progress', before);
    expect(after.map((event) => [event.data.toolCallId, event.data.progress])).toEqual([
      ['call-1', 3],
      ['call-2', 7],
    ]);
  });

  // A job final without its final status event leaves every stream follower waiting for it (the fault
  // suite saw one: the event was written by a second statement that a PostgreSQL restart cut off).
  it('ends a job and stores its final status event together; a lost race stores neither', async () => {
    await createJob('job-final');
    const event = { type: 'status', data: { status: 'succeeded' } };
    expect(await store.finish('job-final', 'succeeded', { ok: true }, undefined, event)).toBe(true);
    expect(await store.cancel('job-final', { type: 'status', data: { status: 'cancelled' } })).toBe(false);
    expect(
      await store.finish('job-final', 'failed', undefined, 'late', {
        type: 'status',
        data: { status: 'failed' },
      }),
    ).toBe(false);

    expect((await store.get('job-final'))?.status).toBe('succeeded');
    expect(await statusEvents('job-final')).toEqual([{ status: 'succeeded' }]);
  });

  it('starts a job and stores its running event in the same statement; an ended job stores neither', async () => {
    await createJob('job-start');
    const running = { type: 'status', data: { status: 'running', replica: 'r1' } };
    const statements = countQueries(pool);
    const started = await store.markRunning('job-start', running);
    expect(statements.stop()).toBe(1);
    expect(started).toMatchObject({ id: 'job-start', status: 'running' });
    expect(started?.startedAt).toBeInstanceOf(Date);
    expect(await statusEvents('job-start')).toEqual([{ status: 'running', replica: 'r1' }]);

    expect(await store.cancel('job-start', { type: 'status', data: { status: 'cancelled' } })).toBe(true);
    expect(await store.markRunning('job-start', running)).toBeUndefined();
    expect(await statusEvents('job-start')).toEqual([
      { status: 'running', replica: 'r1' },
      { status: 'cancelled' },
    ]);
  });

  it('cancels a job with its event, once', async () => {
    await createJob('job-cancel');
    const event = { type: 'status', data: { status: 'cancelled' } };
    expect(await store.cancel('job-cancel', event)).toBe(true);
    expect(await store.cancel('job-cancel', event)).toBe(false);
    expect((await store.get('job-cancel'))?.status).toBe('cancelled');
    expect(await statusEvents('job-cancel')).toEqual([{ status: 'cancelled' }]);
  });

  it('leaves a job unended when its final status event cannot be stored', async () => {
    await createJob('job-unstorable');
    // The event's insert fails (as when PostgreSQL goes away mid-statement): the job must not end alone.
    await pool.query(`
      CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'event refused for %', NEW.job_id; END $$;
      CREATE TRIGGER refuse_event BEFORE INSERT ON job_events
        FOR EACH ROW WHEN (NEW.job_id = 'job-unstorable') EXECUTE FUNCTION refuse_event();`);
    const event = { type: 'status', data: { status: 'failed' } };
    await expect(store.finish('job-unstorable', 'failed', undefined, 'x', event)).rejects.toThrow(
      'event refused for job-unstorable',
    );
    await expect(store.cancel('job-unstorable', event)).rejects.toThrow('event refused');
    expect((await store.get('job-unstorable'))?.status).toBe('queued');
    expect(await statusEvents('job-unstorable')).toEqual([]);
  });
});
