import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { exampleServer, type ServerEntry } from '../../support/fleet.ts';
import { WITH_POSTGRES } from '../backends.ts';
import { all, benchFleet, CallIds, dispatchBurst, progress, rotate, withScope } from '../harness.ts';
import { type Backend, benchFleetOn } from '../postgres-fleet.ts';
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
  /** The same bursts on PostgreSQL alone, taking turns with the Redis ones (absent: not measured). */
  postgres?: { runs: ParallelRun[] };
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
  const servers = () => {
    const entries: Record<string, ServerEntry> = {};
    for (let index = 0; index < most; index++)
      entries[serverName(index)] = exampleServer('recorder', { idempotent: ['record'], concurrency: 1 });
    return entries;
  };
  return withScope(async (scope) => {
    const backends: Backend[] = WITH_POSTGRES ? ['redis', 'postgres'] : ['redis'];
    const dispatchers = {} as Record<Backend, ToolCallDispatcher>;
    for (const backend of backends) {
      const fleet = scope.add(
        backend === 'redis'
          ? benchFleet('bench-parallel', servers)
          : benchFleetOn(backend, 'bench-parallel', servers),
      );
      progress(`parallel: starting two workers with ${most} servers each (${backend})`);
      const suffix = backend === 'redis' ? '' : '-pg';
      await all([
        fleet.startWorker({ id: `w-par-1${suffix}` }),
        fleet.startWorker({ id: `w-par-2${suffix}` }),
      ]);
      dispatchers[backend] = await fleet.dispatcher();
    }
    const ids = new CallIds('bench-parallel');
    const calls = (servers: number, perServer: number, ms: number) =>
      Array.from({ length: servers * perServer }, (_, index) => ({
        server: serverName(index % servers),
        tool: 'record',
        args: { ms },
      }));

    progress('parallel: warming up');
    for (const backend of backends) await dispatchBurst(dispatchers[backend], ids, calls(most, 5, 1));

    const result: ParallelResult = {
      toolMs: options.toolMs,
      workers: 2,
      runs: [],
      ...(WITH_POSTGRES ? { postgres: { runs: [] } } : {}),
    };
    for (const servers of options.serverCounts) {
      const count = servers * options.callsPerServer;
      const runs: Record<Backend, number[]> = { redis: [], postgres: [] };
      for (let repetition = 0; repetition < options.repetitions; repetition++)
        for (const backend of rotate(backends, repetition)) {
          const elapsed = await timed(() =>
            dispatchBurst(dispatchers[backend], ids, calls(servers, options.callsPerServer, options.toolMs)),
          );
          runs[backend].push(count / (elapsed / 1000));
        }
      const idealPerSecond = servers * (1000 / options.toolMs);
      const run = (backend: Backend): ParallelRun => {
        const perSecond = median(runs[backend]);
        return {
          servers,
          calls: count,
          idealPerSecond,
          runs: runs[backend],
          perSecond,
          efficiency: perSecond / idealPerSecond,
        };
      };
      result.runs.push(run('redis'));
      result.postgres?.runs.push(run('postgres'));
      progress(
        `parallel: ${servers} servers × ${options.callsPerServer} calls: ${backends.map((backend) => `${backend} ${median(runs[backend]).toFixed(0)}/s`).join(', ')} of ideal ${idealPerSecond.toFixed(0)}/s`,
      );
    }
    return result;
  });
}
