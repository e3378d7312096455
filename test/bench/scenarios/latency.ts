import { exampleServer } from '../../support/fleet.ts';
import { echoInNewSession, WarmSession } from '../direct-client.ts';
import { Floor } from '../floor.ts';
import { all, benchFleet, CallIds, dispatchOk, interleavedRounds, progress, withScope } from '../harness.ts';
import { type Summary, summarize, timed } from '../stats.ts';

export interface LatencyResult {
  rounds: number;
  /** MCP SDK Client in this process, one warm stdio session. */
  warm: Summary;
  /** Spawn + handshake + call for every call. */
  perCallSession: Summary;
  /** Bare BullMQ: add a job, a no-op worker process completes it, QueueEvents reports it. */
  floor: Summary;
  /** ToolCallDispatcher → queue → worker process → warm session → outcome stream. */
  switchyard: Summary;
}

export interface LatencyOptions {
  warmup: number;
  rounds: number;
  /** Sequential calls per round for the warm paths. */
  perRound: number;
  /** Sequential calls per round with a new session each. */
  perCallSessionPerRound: number;
}

/**
 * Latency of one echo call made four ways, one call at a time. The ways take turns in rounds (and
 * take turns going first), so noise on this shared machine falls on all of them alike.
 */
export function latency(options: LatencyOptions): Promise<LatencyResult> {
  return withScope(async (scope) => {
    const fleet = scope.add(
      benchFleet('bench-latency', () => ({ recorder: exampleServer('recorder', { idempotent: ['echo'] }) })),
    );
    progress('latency: starting a worker, a floor worker and an in-process session');
    const [dispatcher, floor, warm] = await all([
      fleet.startWorker({ id: 'w-latency' }).then(() => fleet.dispatcher()),
      Floor.start(fleet, { queue: 'floor-latency' }).then((started) => scope.add(started)),
      WarmSession.open().then((started) => scope.add(started)),
    ]);
    const ids = new CallIds('bench-latency');
    const ways = {
      warm: () => timed(() => warm.echo('x')),
      floor: () => timed(() => floor.roundTrip()),
      switchyard: () => timed(() => dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' })),
      perCallSession: () => echoInNewSession('x'),
    };
    const calls = (name: keyof typeof ways) =>
      name === 'perCallSession' ? options.perCallSessionPerRound : options.perRound;

    progress(`latency: warming up (${options.warmup} calls each, 2 new sessions)`);
    for (const name of ['warm', 'floor', 'switchyard'] as const)
      for (let i = 0; i < options.warmup; i++) await ways[name]();
    for (let i = 0; i < 2; i++) await ways.perCallSession();

    const samples = await interleavedRounds(ways, options.rounds, calls, 'latency');
    return {
      rounds: options.rounds,
      warm: summarize(samples.warm),
      perCallSession: summarize(samples.perCallSession),
      floor: summarize(samples.floor),
      switchyard: summarize(samples.switchyard),
    };
  });
}
