import { exampleServer } from '../../support/fleet.ts';
import { Floor } from '../floor.ts';
import { all, benchFleet, CallIds, dispatchBurst, progress, withScope } from '../harness.ts';
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

    progress(`serialized: warming up (${options.warmup} calls each)`);
    await dispatchBurst(dispatcher, ids, echoes(options.warmup));
    await floor.burst(options.warmup);

    const result: SerializedResult = { sizes: options.sizes, floor: [], switchyard: [], workerPeakRss: [] };
    for (const size of options.sizes) {
      const floorRuns: number[] = [];
      const switchyardRuns: number[] = [];
      let peak = 0;
      for (let repetition = 0; repetition < options.repetitions; repetition++) {
        const floorFirst = repetition % 2 === 0;
        const runFloor = async () => floorRuns.push(size / ((await timed(() => floor.burst(size))) / 1000));
        const runSwitchyard = async () => {
          const sampler = new RssSampler(worker.pid);
          const elapsed = await timed(() => dispatchBurst(dispatcher, ids, echoes(size)));
          peak = Math.max(peak, sampler.stop());
          switchyardRuns.push(size / (elapsed / 1000));
        };
        if (floorFirst) {
          await runFloor();
          await runSwitchyard();
        } else {
          await runSwitchyard();
          await runFloor();
        }
      }
      result.floor.push({ calls: size, runs: floorRuns, perSecond: median(floorRuns) });
      result.switchyard.push({ calls: size, runs: switchyardRuns, perSecond: median(switchyardRuns) });
      result.workerPeakRss.push(peak);
      progress(
        `serialized: ${size} calls: floor ${median(floorRuns).toFixed(0)}/s, Switchyard ${median(switchyardRuns).toFixed(0)}/s`,
      );
    }
    return result;
  });
}
