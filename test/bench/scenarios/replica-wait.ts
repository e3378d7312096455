import { Redis } from 'ioredis';
import { exampleServer, Fleet } from '../../support/fleet.ts';
import { ReplicatedRedis } from '../../support/redis-replicated.ts';
import {
  BENCH_PROCESS_ENV,
  CallIds,
  dispatchOk,
  interleavedRounds,
  PRODUCTION_WORKER_SETTINGS,
  progress,
  rotate,
  withScope,
} from '../harness.ts';
import { type Summary, summarize, timed } from '../stats.ts';

export interface ReplicaWaitResult {
  rounds: number;
  /** Non-idempotent echo, fenced marker only (worker.replicaWait.replicas: 0). */
  fenceOnly: Summary;
  /** The same, then WAIT until the replica has the marker (replicas: auto = 1 here). */
  withWait: Summary;
  /** Redis alone, one connection: an HSET (the marker's write) per round trip … */
  rawWrite: Summary;
  /** … and the same HSET pipelined with `WAIT 1`, as the fence sends them. */
  rawWriteWait: Summary;
}

export interface ReplicaWaitOptions {
  warmup: number;
  rounds: number;
  perRound: number;
}

/**
 * What the replica wait (docs/semantics.md §3) costs a non-idempotent call: one primary with one
 * replica of the scenario's own, two deployments on it (own prefixes) whose workers differ only in
 * worker.replicaWait, the same non-idempotent echo, one call at a time, taking turns in rounds.
 */
export function replicaWait(options: ReplicaWaitOptions): Promise<ReplicaWaitResult> {
  return withScope(async (scope) => {
    const redis = scope.add(new ReplicatedRedis());
    progress('replica wait: starting a primary with one replica');
    await redis.start();
    const deployment = (label: string, wait: Record<string, unknown>) => {
      const fleet = new Fleet(
        label,
        () => ({ once: exampleServer('recorder', { nonIdempotent: ['echo'] }) }),
        { ...PRODUCTION_WORKER_SETTINGS, replicaWait: wait },
        {},
        redis.url,
        '',
      );
      Object.assign(fleet.processEnv, BENCH_PROCESS_ENV);
      return scope.add(fleet);
    };
    const plain = deployment('bench-fence-only', { replicas: 0 });
    const waiting = deployment('bench-replica-wait', { replicas: 'auto' });
    progress('replica wait: starting a worker without and one with the replica wait');
    const [, waitingWorker] = await Promise.all([
      plain.startWorker({ id: 'w-fence-only' }),
      waiting.startWorker({ id: 'w-replica-wait' }),
    ]);
    // The figure means something only if the worker really waits for the replica.
    await waitingWorker.waitFor(
      (log) => log.msg === 'replicas a non-idempotent call waits for' && log.replicas === 1,
      'w-replica-wait seeing one replica',
    );
    const dispatchers = { fenceOnly: await plain.dispatcher(), withWait: await waiting.dispatcher() };
    const ids = new CallIds('bench-replica-wait');
    const ways = {
      fenceOnly: () => timed(() => dispatchOk(dispatchers.fenceOnly, ids, 'once', 'echo', { text: 'x' })),
      withWait: () => timed(() => dispatchOk(dispatchers.withWait, ids, 'once', 'echo', { text: 'x' })),
    };
    for (const name of ['fenceOnly', 'withWait'] as const)
      for (let i = 0; i < options.warmup; i++) await ways[name]();
    const samples = await interleavedRounds(ways, options.rounds, () => options.perRound, 'replica wait');
    // The same difference without the rest of a call around it: what WAIT adds to the marker's write.
    const direct = scope.add(new DirectRedis(redis.url));
    const raw: Record<'write' | 'writeWait', number[]> = { write: [], writeWait: [] };
    const rawWays = {
      write: () => timed(() => direct.redis.hset('bench-marker', 'progress', '{}')),
      writeWait: () =>
        timed(async () => {
          const replies = await direct.redis
            .pipeline()
            .hset('bench-marker', 'progress', '{}')
            .wait(1, 1_000)
            .exec();
          if (replies?.[1]?.[1] !== 1) throw new Error(`WAIT 1 got ${JSON.stringify(replies?.[1])}`);
        }),
    };
    for (let round = 0; round < options.rounds; round++) {
      for (const name of rotate(['write', 'writeWait'] as const, round))
        for (let i = 0; i < options.perRound; i++) raw[name].push(await rawWays[name]());
    }
    return {
      rounds: options.rounds,
      fenceOnly: summarize(samples.fenceOnly),
      withWait: summarize(samples.withWait),
      rawWrite: summarize(raw.write),
      rawWriteWait: summarize(raw.writeWait),
    };
  });
}

/** A plain connection to the scenario's primary, closed with the scope. */
class DirectRedis {
  readonly redis: Redis;
  constructor(url: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1 });
  }
  async close(): Promise<void> {
    await this.redis.quit();
  }
}

type Table = (headers: string[], numeric: boolean[], rows: string[][]) => string;

/** The report's paragraph and table (report.ts): the two figures side by side and their difference. */
export function renderReplicaWait(
  result: ReplicaWaitResult,
  table: Table,
  format: { ms: (value: number) => string; plus: (value: number) => string },
): string[] {
  const row = (label: string, s: Summary) => [
    label,
    String(s.n),
    format.ms(s.p50),
    format.ms(s.p99),
    format.ms(s.mean),
  ];
  return [
    '**What the replica wait costs** (docs/semantics.md §3): a non-idempotent echo on a primary with one ' +
      `replica (loopback), one call at a time, taking turns over ${result.rounds} rounds; the two workers ` +
      'differ only in `worker.replicaWait` (`replicas: 0` against `auto`, which waits for the one replica ' +
      'to acknowledge the marker with WAIT before the request is sent).',
    table(
      ['non-idempotent echo', 'calls', 'p50', 'p99', 'mean'],
      [false, true, true, true, true],
      [
        row('fenced marker only (replicas: 0)', result.fenceOnly),
        row('fenced marker + WAIT 1 replica', result.withWait),
        row('Redis alone: HSET', result.rawWrite),
        row('Redis alone: HSET + WAIT 1, pipelined', result.rawWriteWait),
      ],
    ),
    `The wait adds ${format.plus(result.withWait.p50 - result.fenceOnly.p50)} at p50 and ` +
      `${format.plus(result.withWait.p99 - result.fenceOnly.p99)} at p99 to a call; to the marker's write ` +
      `alone ${format.plus(result.rawWriteWait.p50 - result.rawWrite.p50)} at p50 and ` +
      `${format.plus(result.rawWriteWait.p99 - result.rawWrite.p99)} at p99.`,
  ];
}
