import type { ClusterResult, RedisFigures } from './scenarios/cluster.ts';
import { ms, perSecond, ratio } from './stats.ts';

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;

/** The `cluster` scenario as Markdown paragraphs: one table, cluster next to single Redis, and its ratios. */
export function renderCluster(result: ClusterResult, table: Table): string[] {
  const { single, cluster } = result;
  const row = (label: string, figures: RedisFigures) => [
    label,
    ms(figures.switchyard.p50),
    ms(figures.switchyard.p99),
    perSecond(figures.serialized.perSecond),
    ms(figures.floor.p50),
    ms(figures.floor.p99),
    perSecond(figures.floorSerialized.perSecond),
  ];
  const versus = (pick: (figures: RedisFigures) => number) => ratio(pick(cluster), pick(single));
  const overFloor = (figures: RedisFigures) => ms(figures.switchyard.p50 - figures.floor.p50);
  return [
    `**Redis Cluster next to single Redis**: the machine's Redis and a Redis Cluster of ${result.primaries} ` +
      'primaries (no replicas) started on this machine for the run, each with its own worker, dispatcher and ' +
      `floor workers. Latency: one echo call at a time (${single.switchyard.n} calls per path); serialized: ` +
      `${result.burst} echo calls at once to one \`concurrency: 1\` server, median of ${result.rounds} bursts. ` +
      `All eight measurements take turns in each of ${result.rounds} rounds.`,
    table(
      [
        'Redis',
        'Switchyard p50',
        'Switchyard p99',
        'serialized calls/s',
        'floor p50',
        'floor p99',
        'floor `setGlobalConcurrency(1)` jobs/s',
      ],
      [false, true, true, true, true, true, true],
      [
        row('single Redis', single),
        row(`Redis Cluster (${result.primaries} primaries, local)`, cluster),
        [
          'cluster / single',
          versus((f) => f.switchyard.p50),
          versus((f) => f.switchyard.p99),
          versus((f) => f.serialized.perSecond),
          versus((f) => f.floor.p50),
          versus((f) => f.floor.p99),
          versus((f) => f.floorSerialized.perSecond),
        ],
      ],
    ),
    `Switchyard over the floor at p50: ${overFloor(single)} on single Redis, ${overFloor(cluster)} on the cluster. ` +
      'The nodes share this machine, so this shows what the cluster protocol costs (slot routing, a ' +
      'connection per primary, each queue and its Switchyard keys on one slot), not a network between nodes; ' +
      "and the machine's Redis also serves whatever else runs on the machine, the cluster only this scenario.",
  ];
}
