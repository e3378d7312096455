import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { exampleServer } from '../../support/fleet.ts';
import { LocalRedisCluster } from '../../support/redis-cluster.ts';
import { Floor } from '../floor.ts';
import {
  all,
  benchFleet,
  CallIds,
  dispatchBurst,
  dispatchOk,
  progress,
  rotate,
  type Scope,
  withScope,
} from '../harness.ts';
import { median, type Summary, summarize, timed } from '../stats.ts';

export interface ClusterOptions {
  warmup: number;
  rounds: number;
  /** Sequential echo calls per round on each latency path. */
  perRound: number;
  /** Calls submitted at once to the `concurrency: 1` server (and jobs to the floor), once per round. */
  burst: number;
}

export interface Throughput {
  /** Calls per second of each round's burst. */
  runs: number[];
  /** The median round. */
  perSecond: number;
}

/** The same four figures on one Redis. */
export interface RedisFigures {
  /** ToolCallDispatcher → queue → worker process → warm session → outcome stream, one call at a time. */
  switchyard: Summary;
  /** Bare BullMQ: add a job, a no-op worker process completes it, QueueEvents reports it. */
  floor: Summary;
  /** `burst` echo calls at once to one `concurrency: 1` server. */
  serialized: Throughput;
  /** `burst` jobs at once to a bare BullMQ queue with setGlobalConcurrency(1) and a no-op processor. */
  floorSerialized: Throughput;
}

export interface ClusterResult {
  rounds: number;
  burst: number;
  primaries: number;
  single: RedisFigures;
  cluster: RedisFigures;
}

const PRIMARIES = 3;

/** One Redis's deployment: a worker serving both servers, its dispatcher, and the two floors. */
interface Side {
  dispatcher: ToolCallDispatcher;
  ids: CallIds;
  floor: Floor;
  floorSerial: Floor;
}

async function startSide(scope: Scope, label: string, clusterNodes?: string): Promise<Side> {
  const fleet = scope.add(
    benchFleet(
      `bench-${label}`,
      () => ({
        recorder: exampleServer('recorder', { idempotent: ['echo'] }),
        serial: exampleServer('recorder', { idempotent: ['echo'], concurrency: 1 }),
      }),
      clusterNodes,
    ),
  );
  // Hash-tagged queue names, as a cluster needs; the machine's Redis gets the same names.
  const [dispatcher, floor, floorSerial] = await all([
    fleet.startWorker({ id: `w-${label}` }).then(() => fleet.dispatcher()),
    Floor.start(fleet, { queue: `floor.{${label}-latency}` }).then((started) => scope.add(started)),
    Floor.start(fleet, { queue: `floor.{${label}-serial}`, concurrency: 1, globalConcurrency: 1 }).then(
      (started) => scope.add(started),
    ),
  ]);
  return { dispatcher, ids: new CallIds(`bench-${label}`), floor, floorSerial };
}

const echoes = (count: number) =>
  Array.from({ length: count }, () => ({ server: 'serial', tool: 'echo', args: { text: 'x' } }));

/**
 * Switchyard and the bare-BullMQ floor on a local Redis Cluster of three primaries, next to the
 * machine's single Redis, in one run: one echo call at a time (latency), and a burst of calls to one
 * `concurrency: 1` server (throughput). The eight measurements take turns within every round (and take
 * turns going first), so noise on this shared machine falls on both Redis setups alike. The cluster
 * runs on this same machine: what it shows is the cost of the cluster protocol (slot routing, one
 * connection per primary), not of a network hop between nodes.
 */
export function cluster(options: ClusterOptions): Promise<ClusterResult> {
  return withScope(async (scope) => {
    const redisCluster = new LocalRedisCluster();
    // Added before it starts, so that a start that fails half-way still stops the nodes it started.
    scope.add({ close: () => redisCluster.stop() });
    progress(`cluster: starting a ${PRIMARIES}-primary Redis Cluster and a deployment on the single Redis`);
    const [, single] = await all([redisCluster.start(PRIMARIES), startSide(scope, 'single')]);
    progress(`cluster: starting a deployment on the cluster (${redisCluster.nodes})`);
    const onCluster = await startSide(scope, 'cluster', redisCluster.nodes);
    const sides = { single, cluster: onCluster };

    type SideName = keyof typeof sides;
    const latencyWays = (side: Side) => ({
      switchyard: () => timed(() => dispatchOk(side.dispatcher, side.ids, 'recorder', 'echo', { text: 'x' })),
      floor: () => timed(() => side.floor.roundTrip()),
    });
    const burstWays = (side: Side) => ({
      serialized: () => timed(() => dispatchBurst(side.dispatcher, side.ids, echoes(options.burst))),
      floorSerialized: () => timed(() => side.floorSerial.burst(options.burst)),
    });

    progress(`cluster: warming up (${options.warmup} calls each path, one small burst each)`);
    for (const side of Object.values(sides)) {
      for (const way of Object.values(latencyWays(side)))
        for (let i = 0; i < options.warmup; i++) await way();
      await dispatchBurst(side.dispatcher, side.ids, echoes(options.warmup));
      await side.floorSerial.burst(options.warmup);
    }

    const latency = { switchyard: [] as number[], floor: [] as number[] };
    const bursts = { serialized: [] as number[], floorSerialized: [] as number[] };
    const samples = {
      single: { latency: structuredClone(latency), bursts: structuredClone(bursts) },
      cluster: { latency: structuredClone(latency), bursts: structuredClone(bursts) },
    };
    const names = Object.keys(sides) as SideName[];
    const pairs = <K extends string>(ways: (side: Side) => Record<K, unknown>) =>
      names.flatMap((name) => (Object.keys(ways(sides[name])) as K[]).map((way) => [name, way] as const));
    const latencyOrder = pairs(latencyWays);
    const burstOrder = pairs(burstWays);

    for (let round = 0; round < options.rounds; round++) {
      for (const [name, way] of rotate(latencyOrder, round)) {
        const run = latencyWays(sides[name])[way];
        for (let i = 0; i < options.perRound; i++) samples[name].latency[way].push(await run());
      }
      for (const [name, way] of rotate(burstOrder, round)) {
        const elapsed = await burstWays(sides[name])[way]();
        samples[name].bursts[way].push(options.burst / (elapsed / 1000));
      }
      progress(`cluster: round ${round + 1}/${options.rounds}`);
    }

    const figures = (name: SideName): RedisFigures => {
      const { latency: lat, bursts: b } = samples[name];
      return {
        switchyard: summarize(lat.switchyard),
        floor: summarize(lat.floor),
        serialized: { runs: b.serialized, perSecond: median(b.serialized) },
        floorSerialized: { runs: b.floorSerialized, perSecond: median(b.floorSerialized) },
      };
    };
    const result = {
      rounds: options.rounds,
      burst: options.burst,
      primaries: PRIMARIES,
      single: figures('single'),
      cluster: figures('cluster'),
    };
    progress(
      `cluster: Switchyard p50 ${result.single.switchyard.p50.toFixed(2)} ms single, ${result.cluster.switchyard.p50.toFixed(2)} ms cluster; ` +
        `serialized ${result.single.serialized.perSecond.toFixed(0)}/s single, ${result.cluster.serialized.perSecond.toFixed(0)}/s cluster`,
    );
    return result;
  });
}
