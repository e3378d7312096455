import { exampleServer, type ServerEntry } from '../../support/fleet.ts';
import { all, benchFleet, CallIds, dispatchBurst, progress, withScope } from '../harness.ts';
import { type Rss, rssTree } from '../rss.ts';

export interface WorkerMemory {
  sessions: number;
  /** After start-up: every session ready, no call yet. */
  ready: Rss;
  /** After `callsPerSession` calls on every session. */
  warm: Rss;
}

export interface WorkerMemoryResult {
  callsPerSession: number;
  workers: WorkerMemory[];
}

export interface WorkerMemoryOptions {
  sessionCounts: number[];
  callsPerSession: number;
}

/**
 * Worker RSS with K warm sessions: one worker process per K (each serving its own K servers, so no
 * call of one lands on the other), measured alone and with its stdio MCP server children.
 */
export function workerMemory(options: WorkerMemoryOptions): Promise<WorkerMemoryResult> {
  const names = (k: number) => Array.from({ length: k }, (_, index) => `k${k}-s${index + 1}`);
  return withScope(async (scope) => {
    const fleet = scope.add(
      benchFleet('bench-wmem', () => {
        const servers: Record<string, ServerEntry> = {};
        for (const k of options.sessionCounts)
          for (const name of names(k)) servers[name] = exampleServer('recorder', { idempotent: ['echo'] });
        return servers;
      }),
    );
    progress(`worker memory: starting workers with ${options.sessionCounts.join(' and ')} sessions`);
    const workers = await all(
      options.sessionCounts.map((k) => fleet.startWorker({ id: `w-${k}-sessions`, servers: names(k) })),
    );
    const ready = workers.map((worker) => rssTree(worker.pid));
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-wmem');
    for (const k of options.sessionCounts) {
      await dispatchBurst(
        dispatcher,
        ids,
        names(k).flatMap((server) =>
          Array.from({ length: options.callsPerSession }, () => ({
            server,
            tool: 'echo',
            args: { text: 'x' },
          })),
        ),
      );
    }
    const result: WorkerMemoryResult = {
      callsPerSession: options.callsPerSession,
      workers: workers.map((worker, index) => ({
        sessions: options.sessionCounts[index] ?? 0,
        ready: ready[index] as Rss,
        warm: rssTree(worker.pid),
      })),
    };
    for (const worker of result.workers)
      progress(
        `worker memory: ${worker.sessions} sessions: ${(worker.warm.self / 2 ** 20).toFixed(0)} MiB, with children ${(worker.warm.withChildren / 2 ** 20).toFixed(0)} MiB`,
      );
    return result;
  });
}
