import type { Redis } from 'ioredis';
import { exampleServer, Fleet } from '../../support/fleet.ts';
import { DedicatedRedis } from '../../support/redis-server.ts';
import {
  BENCH_PROCESS_ENV,
  CallIds,
  dispatchOk,
  PRODUCTION_WORKER_SETTINGS,
  progress,
  withScope,
} from '../harness.ts';

/** What Redis did, summed: commands by name, bytes in and out, and its own CPU time. */
interface RedisWork {
  commands: Record<string, number>;
  bytesIn: number;
  bytesOut: number;
  cpuMs: number;
  at: number;
}

export interface CostRow {
  commands: number;
  bytesIn: number;
  bytesOut: number;
  /** Redis CPU (user + sys) per call: the single-threaded server's real budget. */
  cpuMs: number;
  /** The commands behind `commands`, most frequent first. */
  byCommand: Array<{ command: string; perCall: number }>;
}

export interface RedisCostResult {
  calls: number;
  idempotent: CostRow;
  nonIdempotent: CostRow;
  /** The fleet at rest (one worker, two servers, a dispatcher): heartbeats, BullMQ's blocking reads and checks. */
  idlePerSecond: Omit<CostRow, 'byCommand'>;
  /** Connections by client name, from CLIENT LIST, while the fleet runs. */
  connections: Record<string, number>;
}

export interface RedisCostOptions {
  warmup: number;
  calls: number;
  idleMs: number;
}

/** Commands the measurement itself sends; not the fleet's work. */
const OWN_COMMANDS = new Set(['info', 'client|list', 'client']);

async function snapshot(redis: Redis): Promise<RedisWork> {
  const info = await redis.info('everything');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  const commands: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    const name = match[1] as string;
    if (!OWN_COMMANDS.has(name)) commands[name] = Number(match[2]);
  }
  return {
    commands,
    bytesIn: field('total_net_input_bytes'),
    bytesOut: field('total_net_output_bytes'),
    cpuMs: (field('used_cpu_user') + field('used_cpu_sys')) * 1000,
    at: performance.now(),
  };
}

/** `after − before − idle × elapsed`, per call. */
function perCall(before: RedisWork, after: RedisWork, idle: RedisWork | undefined, calls: number): CostRow {
  const seconds = (after.at - before.at) / 1000;
  const idleRate = (value: (work: RedisWork) => number) => (idle ? value(idle) * seconds : 0);
  const byCommand = Object.keys(after.commands)
    .map((command) => ({
      command,
      perCall:
        ((after.commands[command] ?? 0) -
          (before.commands[command] ?? 0) -
          idleRate((w) => w.commands[command] ?? 0)) /
        calls,
    }))
    .filter((row) => row.perCall >= 0.05)
    .sort((a, b) => b.perCall - a.perCall);
  return {
    commands: byCommand.reduce((sum, row) => sum + row.perCall, 0),
    bytesIn: (after.bytesIn - before.bytesIn - idleRate((w) => w.bytesIn)) / calls,
    bytesOut: (after.bytesOut - before.bytesOut - idleRate((w) => w.bytesOut)) / calls,
    cpuMs: (after.cpuMs - before.cpuMs - idleRate((w) => w.cpuMs)) / calls,
    byCommand,
  };
}

/** Per-second rates of a window with no calls, as a RedisWork (`at` unused). */
function rate(before: RedisWork, after: RedisWork): RedisWork {
  const seconds = (after.at - before.at) / 1000;
  const commands: Record<string, number> = {};
  for (const name of Object.keys(after.commands))
    commands[name] = ((after.commands[name] ?? 0) - (before.commands[name] ?? 0)) / seconds;
  return {
    commands,
    bytesIn: (after.bytesIn - before.bytesIn) / seconds,
    bytesOut: (after.bytesOut - before.bytesOut) / seconds,
    cpuMs: (after.cpuMs - before.cpuMs) / seconds,
    at: 0,
  };
}

/**
 * Redis commands, bytes, CPU and connections per tool call, counted by Redis itself (INFO commandstats,
 * stats and cpu deltas) on a Redis of the scenario's own, so nothing else on the machine is counted. The
 * fleet's background work (heartbeats, BullMQ's blocking reads) is measured in a quiet window first and
 * taken off. These are the inputs of docs/capacity.md.
 */
export function redisCost(options: RedisCostOptions): Promise<RedisCostResult> {
  return withScope(async (scope) => {
    const redis = new DedicatedRedis({ persistent: false });
    scope.add({ close: () => redis.stop() });
    await redis.start();
    const fleet = scope.add(
      new Fleet(
        'bench-redis-cost',
        () => ({
          idem: exampleServer('recorder', { idempotent: ['echo'] }),
          once: exampleServer('recorder', { nonIdempotent: ['echo'] }),
        }),
        PRODUCTION_WORKER_SETTINGS,
        {},
        redis.url,
      ),
    );
    Object.assign(fleet.processEnv, BENCH_PROCESS_ENV);
    progress('redis cost: a worker and a dispatcher on a Redis of their own');
    await fleet.startWorker({ id: 'w-redis-cost' });
    const dispatcher = await fleet.dispatcher();
    const ids = new CallIds('bench-redis-cost');
    const probe = fleet.redis as Redis;
    for (const server of ['idem', 'once'])
      for (let i = 0; i < options.warmup; i++)
        await dispatchOk(dispatcher, ids, server, 'echo', { text: 'x' });

    const quietStart = await snapshot(probe);
    await new Promise((resolve) => setTimeout(resolve, options.idleMs));
    const idle = rate(quietStart, await snapshot(probe));

    const measure = async (server: string) => {
      const before = await snapshot(probe);
      for (let i = 0; i < options.calls; i++)
        await dispatchOk(dispatcher, ids, server, 'echo', { text: 'x' });
      return perCall(before, await snapshot(probe), idle, options.calls);
    };
    const idempotent = await measure('idem');
    const nonIdempotent = await measure('once');

    const connections: Record<string, number> = {};
    for (const line of String(await probe.client('LIST')).split('\n')) {
      const name = /name=(\S*)/.exec(line)?.[1];
      if (name === undefined) continue;
      // Worker and replica ids vary; the role is what counts.
      const role = name
        .replace(/-w-redis-cost/, '')
        .replace(/^$/, '(unnamed: BullMQ blocking and duplicates)');
      connections[role] = (connections[role] ?? 0) + 1;
    }
    progress(
      `redis cost: ${idempotent.commands.toFixed(1)} / ${nonIdempotent.commands.toFixed(1)} commands per idempotent / non-idempotent call`,
    );
    return {
      calls: options.calls,
      idempotent,
      nonIdempotent,
      idlePerSecond: {
        commands: Object.values(idle.commands).reduce((sum, value) => sum + value, 0),
        bytesIn: idle.bytesIn,
        bytesOut: idle.bytesOut,
        cpuMs: idle.cpuMs,
      },
      connections,
    };
  });
}
