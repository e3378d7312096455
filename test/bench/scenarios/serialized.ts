import { exampleServer } from '../../support/fleet.ts';
import { WITH_POSTGRES } from '../backends.ts';
import { Floor, PostgresFloor } from '../floor.ts';
import { all, benchFleet, CallIds, dispatchBurst, progress, rotate, withScope } from '../harness.ts';
import { benchFleetOn } from '../postgres-fleet.ts';
import { RssSampler } from '../rss.ts';
import { median, timed } from '../stats.ts';

export interface BurstResult {
  calls: number;
  /** Calls per second of each repetition. */
  runs: number[];
  /** The median repetition. */
  perSecond: number;
}

export interface SerializedResult {
  /** Calls submitted at once, per size (1× and 10×). */
  sizes: number[];
  floor: BurstResult[];
  switchyard: BurstResult[];
  /** Peak RSS of the worker process (bytes) while it served each size's Switchyard bursts. */
  workerPeakRss: number[];
  /** The same bursts on PostgreSQL alone, taking turns with the Redis ones (absent: not measured). */
  postgres?: { floor: BurstResult[]; switchyard: BurstResult[] };
}

export interface SerializedOptions {
  warmup: number;
  /** e.g. [100, 1000]: the 1× and 10× workloads. */
  sizes: number[];
  repetitions: number;
}

/**
 * Throughput of one `concurrency: 1` server: every call of a burst is submitted at once and the
 * server works through them one at a time. Against the floor: a bare BullMQ queue with
 * setGlobalConcurrency(1) and a no-op processor in its own process. Bursts alternate between the two.
 */
export function serialized(options: SerializedOptions): Promise<SerializedResult> {
  return withScope(async (scope) => {
    const fleet = scope.add(
      benchFleet('bench-serial', () => ({
        recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
      })),
    );
    progress('serialized: starting a worker and a floor worker');
    const [worker, floor] = await all([
      fleet.startWorker({ id: 'w-serial' }),
      Floor.start(fleet, { queue: 'floor-serial', concurrency: 1, globalConcurrency: 1 }).then((started) =>
        scope.add(started),
      ),
    ]);
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-serial');
    const echoes = (count: number) =>
      Array.from({ length: count }, () => ({ server: 'recorder', tool: 'echo', args: { text: 'x' } }));
    // Each way runs one burst of `size` calls and returns how long it took.
    let peak = 0;
    const ways: Record<string, (size: number) => Promise<number>> = {
      floor: (size) => timed(() => floor.burst(size)),
      switchyard: async (size) => {
        const sampler = new RssSampler(worker.pid);
        const elapsed = await timed(() => dispatchBurst(dispatcher, ids, echoes(size)));
        peak = Math.max(peak, sampler.stop());
        return elapsed;
      },
    };
    if (WITH_POSTGRES) {
      const pgFleet = scope.add(
        benchFleetOn('postgres', 'bench-serial', () => ({
          recorder: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
        })),
      );
      progress('serialized: starting a worker and a floor worker on PostgreSQL');
      const [, pgFloor] = await all([
        pgFleet.startWorker({ id: 'w-serial-pg' }),
        PostgresFloor.start(pgFleet, { queue: 'floor-serial', concurrency: 1, globalConcurrency: 1 }).then(
          (started) => scope.add(started),
        ),
      ]);
      const pgDispatcher = await pgFleet.dispatcher();
      ways.floorPostgres = (size) => timed(() => pgFloor.burst(size));
      ways.switchyardPostgres = (size) => timed(() => dispatchBurst(pgDispatcher, ids, echoes(size)));
    }
    const names = Object.keys(ways);

    progress(`serialized: warming up (${options.warmup} calls each)`);
    for (const name of names) await ways[name]?.(options.warmup);

    const result: SerializedResult = {
      sizes: options.sizes,
      floor: [],
      switchyard: [],
      workerPeakRss: [],
      ...(WITH_POSTGRES ? { postgres: { floor: [], switchyard: [] } } : {}),
    };
    for (const size of options.sizes) {
      const runs: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
      peak = 0;
      // The ways take turns going first, so a machine slowing down mid-run slows each alike.
      for (let repetition = 0; repetition < options.repetitions; repetition++)
        for (const name of rotate(names, repetition)) {
          const elapsed = (await ways[name]?.(size)) ?? 0;
          runs[name]?.push(size / (elapsed / 1000));
        }
      const burst = (name: string): BurstResult => ({
        calls: size,
        runs: runs[name] ?? [],
        perSecond: median(runs[name] ?? []),
      });
      result.floor.push(burst('floor'));
      result.switchyard.push(burst('switchyard'));
      result.workerPeakRss.push(peak);
      result.postgres?.floor.push(burst('floorPostgres'));
      result.postgres?.switchyard.push(burst('switchyardPostgres'));
      progress(
        `serialized: ${size} calls: ${names.map((name) => `${name} ${median(runs[name] ?? []).toFixed(0)}/s`).join(', ')}`,
      );
    }
    return result;
  });
}
