import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LatencySamples, latencySamples } from '../src/index.ts';
import { PostgresLatencySamples, TRIM_SAMPLES_SQL } from '../src/latency/postgres-latency-samples.ts';
import { contractBackends, type OpenedStore, postgresBackend } from './contract-backends.ts';

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const window = { windowSamples: 50, windowMs: 600_000 };

describe.each(contractBackends)('LatencySamples on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let samples: LatencySamples;

  beforeAll(async () => {
    opened = await backend.open();
    samples = latencySamples(opened.store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('reads nothing for a server nobody recorded', async () => {
    expect(await samples.read('quiet', ['search', 'fetch'], window)).toEqual({ server: [], tools: [[], []] });
  });

  it('reads both windows back when recording, the new sample included', async () => {
    expect(await samples.record('docs', 'search', 120, window)).toEqual({ tool: [120], server: [120] });
    expect(await samples.record('docs', 'search', 80, window)).toEqual({
      tool: expect.arrayContaining([120, 80]),
      server: expect.arrayContaining([120, 80]),
    });
    const other = await samples.record('docs', 'fetch', 300, window);
    expect(other.tool).toEqual([300]);
    expect(sorted(other.server)).toEqual([80, 120, 300]);
  });

  it('reads the server’s window and each named tool’s, in the order asked', async () => {
    const read = await samples.read('docs', ['fetch', 'unknown', 'search'], window);
    expect(sorted(read.server)).toEqual([80, 120, 300]);
    expect(read.tools.map(sorted)).toEqual([[300], [], [80, 120]]);
    // Another server's windows are its own.
    expect(await samples.read('other', ['search'], window)).toEqual({ server: [], tools: [[]] });
  });

  it('keeps durations as whole, non-negative ms', async () => {
    expect((await samples.record('rounding', 'tool', 12.6, window)).tool).toEqual([13]);
    expect(sorted((await samples.record('rounding', 'tool', -4, window)).tool)).toEqual([0, 13]);
  });

  it('counts at most windowSamples samples per window', async () => {
    const small = { windowSamples: 3, windowMs: 600_000 };
    let last = { tool: [] as number[], server: [] as number[] };
    for (const ms of [10, 20, 30, 40, 50]) last = await samples.record('capped', 'tool', ms, small);
    expect(last.tool).toHaveLength(3);
    expect(last.server).toHaveLength(3);
    // The sample just recorded is always among them.
    expect(last.tool).toContain(50);
    const read = await samples.read('capped', ['tool'], small);
    expect(read.server).toHaveLength(3);
    expect(read.tools[0]).toHaveLength(3);
  });

  it('no longer counts samples older than windowMs', async () => {
    await samples.record('aging', 'tool', 70, window);
    // Time itself is what is tested: the sample must become older than the 5 ms window.
    await delay(30);
    const short = { windowSamples: 50, windowMs: 5 };
    expect(await samples.read('aging', ['tool'], short)).toEqual({ server: [], tools: [[]] });
    expect(await samples.read('aging', ['tool'], window)).toEqual({ server: [70], tools: [[70]] });
    // Last: on Redis a record with this window also lets the lists expire within 5 ms.
    expect(await samples.record('aging', 'tool', 90, short)).toEqual({ tool: [90], server: [90] });
  });
});

describe('LatencySamples on postgres: trimming', () => {
  let opened: OpenedStore | undefined;

  beforeAll(async () => {
    opened = await postgresBackend.open();
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('deletes samples past the window’s age and a tool’s beyond its newest windowSamples', async () => {
    const store = opened?.store;
    if (store?.kind !== 'postgres') throw new Error('expected a postgres store');
    const now = Date.now();
    // a: six recent samples 1 ms apart, one old; b: two recent, one old; another server: one old.
    const rows: Array<[string, string, number, number]> = [
      ...[1, 2, 3, 4, 5, 6].map((age): [string, string, number, number] => ['s', 'a', now - age, age]),
      ['s', 'a', now - 700_000, 99],
      ['s', 'b', now - 1, 1],
      ['s', 'b', now - 2, 2],
      ['s', 'b', now - 700_000, 99],
      ['t', 'a', now - 700_000, 99],
    ];
    for (const row of rows) {
      await store.pool.query(
        'INSERT INTO latency_sample (server, tool, finished_at_ms, ms) VALUES ($1, $2, $3, $4)',
        row,
      );
    }
    await store.pool.query(TRIM_SAMPLES_SQL, ['s', 'a', 4, 600_000]);
    const { rows: left } = await store.pool.query<{ server: string; tool: string; ms: number }>(
      'SELECT server, tool, ms FROM latency_sample ORDER BY server, tool, ms',
    );
    expect(left).toEqual([
      ...[1, 2, 3, 4].map((ms) => ({ server: 's', tool: 'a', ms })),
      { server: 's', tool: 'b', ms: 1 },
      { server: 's', tool: 'b', ms: 2 },
      { server: 't', tool: 'a', ms: 99 },
    ]);
  });

  it('trims after a record, without making the record wait for it', async () => {
    const store = opened?.store;
    if (store?.kind !== 'postgres') throw new Error('expected a postgres store');
    await store.pool.query(
      'INSERT INTO latency_sample (server, tool, finished_at_ms, ms) VALUES ($1, $2, $3, $4)',
      ['u', 'a', Date.now() - 700_000, 99],
    );
    let trimmed: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      trimmed = resolve;
    });
    const pool = new Proxy(store.pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return (text: string, values: unknown[]) => {
          const result = target.query(text, values);
          if (text === TRIM_SAMPLES_SQL) void result.then(() => trimmed());
          return result;
        };
      },
    });
    const samples = new PostgresLatencySamples(pool);
    expect(await samples.record('u', 'a', 5, window)).toEqual({ tool: [5], server: [5] });
    await done;
    const { rows } = await store.pool.query<{ ms: number }>(
      "SELECT ms FROM latency_sample WHERE server = 'u'",
    );
    expect(rows).toEqual([{ ms: 5 }]);
  });
});
