import { exampleServer } from '../../support/fleet.ts';
import { benchFleet, CallIds, dispatchOk, interleavedRounds, progress, withScope } from '../harness.ts';
import { type Summary, summarize, timed } from '../stats.ts';

export interface FencingResult {
  rounds: number;
  /** echo declared idempotent: no marker, no fence while the lock is fresh. */
  idempotent: Summary;
  /** The same echo declared non-idempotent: the fenced marker before every send and the hold before its outcome is recorded (two Lua scripts). */
  nonIdempotent: Summary;
}

export interface FencingOptions {
  warmup: number;
  rounds: number;
  perRound: number;
}

/**
 * What at-most-once costs per call: the same echo tool on two servers that differ only in whether the
 * tool is idempotent, one call at a time, taking turns in rounds so noise falls on both alike.
 */
export function fencing(options: FencingOptions): Promise<FencingResult> {
  return withScope(async (scope) => {
    const fleet = scope.add(
      benchFleet('bench-fencing', () => ({
        idem: exampleServer('recorder', { idempotent: ['echo'] }),
        once: exampleServer('recorder', { nonIdempotent: ['echo'] }),
      })),
    );
    progress('fencing: starting a worker serving an idempotent and a non-idempotent echo');
    await fleet.startWorker({ id: 'w-fencing' });
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-fencing');
    const ways = {
      idempotent: () => timed(() => dispatchOk(dispatcher, ids, 'idem', 'echo', { text: 'x' })),
      nonIdempotent: () => timed(() => dispatchOk(dispatcher, ids, 'once', 'echo', { text: 'x' })),
    };
    for (const name of ['idempotent', 'nonIdempotent'] as const)
      for (let i = 0; i < options.warmup; i++) await ways[name]();
    const samples = await interleavedRounds(ways, options.rounds, () => options.perRound, 'fencing');
    return {
      rounds: options.rounds,
      idempotent: summarize(samples.idempotent),
      nonIdempotent: summarize(samples.nonIdempotent),
    };
  });
}
