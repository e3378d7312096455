import { exampleServer } from '../../support/fleet.ts';
import { WITH_POSTGRES } from '../backends.ts';
import { echoInNewSession, WarmSession } from '../direct-client.ts';
import { Floor, PostgresFloor } from '../floor.ts';
import { all, benchFleet, CallIds, dispatchOk, interleavedRounds, progress, withScope } from '../harness.ts';
import { benchFleetOn } from '../postgres-fleet.ts';
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
  /** The same floor and Switchyard paths on PostgreSQL alone, in the same rounds (absent: not measured). */
  postgres?: { floor: Summary; switchyard: Summary };
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
    const ways: Record<string, () => Promise<number>> = {
      warm: () => timed(() => warm.echo('x')),
      floor: () => timed(() => floor.roundTrip()),
      switchyard: () => timed(() => dispatchOk(dispatcher, ids, 'recorder', 'echo', { text: 'x' })),
      perCallSession: () => echoInNewSession('x'),
    };
    if (WITH_POSTGRES) {
      const pgFleet = scope.add(
        benchFleetOn('postgres', 'bench-latency', () => ({
          recorder: exampleServer('recorder', { idempotent: ['echo'] }),
        })),
      );
      progress('latency: starting a worker and a floor worker on PostgreSQL');
      const [pgDispatcher, pgFloor] = await all([
        pgFleet.startWorker({ id: 'w-latency-pg' }).then(() => pgFleet.dispatcher()),
        PostgresFloor.start(pgFleet, { queue: 'floor-latency' }).then((started) => scope.add(started)),
      ]);
      ways.floorPostgres = () => timed(() => pgFloor.roundTrip());
      ways.switchyardPostgres = () =>
        timed(() => dispatchOk(pgDispatcher, ids, 'recorder', 'echo', { text: 'x' }));
    }
    const calls = (name: string) =>
      name === 'perCallSession' ? options.perCallSessionPerRound : options.perRound;

    progress(`latency: warming up (${options.warmup} calls each, 2 new sessions)`);
    for (const [name, way] of Object.entries(ways)) {
      if (name === 'perCallSession') continue;
      for (let i = 0; i < options.warmup; i++) await way();
    }
    for (let i = 0; i < 2; i++) await ways.perCallSession?.();

    const samples = await interleavedRounds(ways, options.rounds, calls, 'latency');
    const of = (name: string) => summarize(samples[name] ?? []);
    return {
      rounds: options.rounds,
      warm: of('warm'),
      perCallSession: of('perCallSession'),
      floor: of('floor'),
      switchyard: of('switchyard'),
      ...(WITH_POSTGRES
        ? { postgres: { floor: of('floorPostgres'), switchyard: of('switchyardPostgres') } }
        : {}),
    };
  });
}
