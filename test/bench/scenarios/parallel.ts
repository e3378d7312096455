import { exampleServer, type ServerEntry } from '../../support/fleet.ts';
import { all, benchFleet, CallIds, dispatchBurst, progress, withScope } from '../harness.ts';
import { median, timed } from '../stats.ts';

export interface ParallelRun {
  servers: number;
  calls: number;
  /** N servers / tool time: every server busy all the time, nothing else costing anything. */
  idealPerSecond: number;
  runs: number[];
  perSecond: number;
  efficiency: number;
}

export interface ParallelResult {
  toolMs: number;
  workers: number;
  runs: ParallelRun[];
}

export interface ParallelOptions {
  /** e.g. [1, 4, 10]: how many servers take calls in each measurement. */
  serverCounts: number[];
  callsPerServer: number;
  toolMs: number;
  repetitions: number;
}

const serverName = (index: number) => `p${index + 1}`;

/**
 * Parallel efficiency: N `concurrency: 1` servers whose tool takes a fixed time, served by two worker
 * processes (each holding a session to every server), `callsPerServer` calls to each submitted at once.
 * The ideal is N / tool time; what is lost is queueing, hand-off and the CPU of a 2-core machine.
 */
export function parallel(options: ParallelOptions): Promise<ParallelResult> {
  const most = Math.max(...options.serverCounts);
  return withScope(async (scope) => {
    const fleet = scope.add(
      benchFleet('bench-parallel', () => {
        const servers: Record<string, ServerEntry> = {};
        for (let index = 0; index < most; index++)
          servers[serverName(index)] = exampleServer('recorder', { idempotent: ['record'], concurrency: 1 });
        return servers;
      }),
    );
    progress(`parallel: starting two workers with ${most} servers each`);
    await all([fleet.startWorker({ id: 'w-par-1' }), fleet.startWorker({ id: 'w-par-2' })]);
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-parallel');
    const calls = (servers: number, perServer: number, ms: number) =>
      Array.from({ length: servers * perServer }, (_, index) => ({
        server: serverName(index % servers),
        tool: 'record',
        args: { ms },
      }));

    progress('parallel: warming up');
    await dispatchBurst(dispatcher, ids, calls(most, 5, 1));

    const result: ParallelResult = { toolMs: options.toolMs, workers: 2, runs: [] };
    for (const servers of options.serverCounts) {
      const count = servers * options.callsPerServer;
      const runs: number[] = [];
      for (let repetition = 0; repetition < options.repetitions; repetition++) {
        const elapsed = await timed(() =>
          dispatchBurst(dispatcher, ids, calls(servers, options.callsPerServer, options.toolMs)),
        );
        runs.push(count / (elapsed / 1000));
      }
      const idealPerSecond = servers * (1000 / options.toolMs);
      const perSecond = median(runs);
      result.runs.push({
        servers,
        calls: count,
        idealPerSecond,
        runs,
        perSecond,
        efficiency: perSecond / idealPerSecond,
      });
      progress(
        `parallel: ${servers} servers × ${options.callsPerServer} calls: ${perSecond.toFixed(0)}/s of ideal ${idealPerSecond.toFixed(0)}/s`,
      );
    }
    return result;
  });
}
