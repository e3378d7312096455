import type { ToolCallOutcome } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { exampleServer, type ServerEntry } from '../../support/fleet.ts';
import { WITH_POSTGRES } from '../backends.ts';
import {
  all,
  benchFleet,
  CallIds,
  dispatchBurst,
  expectOk,
  progress,
  rotate,
  withScope,
} from '../harness.ts';
import { type Backend, benchFleetOn } from '../postgres-fleet.ts';
import { median, since } from '../stats.ts';

/** One burst on one serialized (`concurrency: 1`) server. */
export interface SerialRun {
  calls: number;
  wallMs: number;
  perSecond: number;
  /** perSecond ÷ (1 call per tool time). */
  efficiency: number;
  /** Calls each worker took, by worker id. */
  callsPerWorker: Record<string, number>;
}

export interface SerialLane {
  workers: number;
  /** Every repetition; the row shows the median one. */
  runs: SerialRun[];
  median: SerialRun;
}

export interface LaneServer {
  server: string;
  concurrency: number;
  calls: number;
  /** From the burst's start to this server's last outcome. */
  wallMs: number;
  perSecond: number;
  /** perSecond ÷ (concurrency calls per tool time). */
  efficiency: number;
  queuedP50Ms: number;
}

export interface LaneWorker {
  worker: string;
  calls: number;
  /** Its calls, by server. */
  callsByServer: Record<string, number>;
  /** Share of the burst's wall time during which the worker had at least one call running. */
  busyShare: number;
}

/** One mixed burst over two serialized servers and a concurrent one, three workers. */
export interface MixedRun {
  calls: number;
  wallMs: number;
  servers: LaneServer[];
  workers: LaneWorker[];
  queuedP50Ms: number;
}

export interface FairnessRun {
  fairness: 'teams' | 'fifo';
  /** Team B's calls not yet started on the server when team A's call was submitted. */
  bWaiting: number;
  /** Team B's calls the server started after A's call was submitted and before A's call. */
  bAhead: number;
  /** From A's submission to the server starting A's call. */
  aWaitMs: number;
  /** Mean gap between consecutive starts of B's calls on the server: one call's time on this lane. */
  callMs: number;
  aWaitCalls: number;
}

export interface LanesResult {
  toolMs: number;
  serial: SerialLane[];
  /** Every repetition; the rows show the one with the median wall time. */
  mixed: { runs: MixedRun[]; median: MixedRun };
  floodToolMs: number;
  floodCalls: number;
  fairness: FairnessRun[];
  /**
   * The serialized lanes and fair share on PostgreSQL alone (a fleet of its own serving only those
   * servers), taking turns with the Redis runs; absent: not measured.
   */
  postgres?: { serial: SerialLane[]; fairness: FairnessRun[] };
}

export interface LanesOptions {
  /** The `record` tool's time in the serial and mixed bursts. */
  toolMs: number;
  /** Calls submitted at once on one serialized server, e.g. 100. */
  serialCalls: number;
  /** Calls of the mixed burst, spread evenly over its three servers, e.g. 300. */
  mixedCalls: number;
  /** `concurrency` of the mixed burst's concurrent server, e.g. 8. */
  wideConcurrency: number;
  repetitions: number;
  /** Team B's flood on one serialized server, and its tool time. */
  floodCalls: number;
  floodToolMs: number;
  /** Runs of each fairness mode, alternating which goes first. */
  fairnessRepetitions: number;
}

const WORKERS = ['w-lanes-1', 'w-lanes-2', 'w-lanes-3'];
/** Served by the first worker only: the 1-worker serialized lane. */
const SOLO = 'solo';
/** The rest are served by all three workers. */
const TRIO = 'trio';
const LANES = ['lane-a', 'lane-b'];
const WIDE = 'wide';
const FAIR = 'fair';
const FIFO = 'fifo';

/** Wall-clock epoch ms with sub-ms precision, comparable with the recorder's own start times. */
const epochNow = () => performance.timeOrigin + performance.now();

/** The `record` tool's own start (server clock, sub-ms), from its structured result. */
const recordedStart = (outcome: ToolCallOutcome) => Number(outcome.structuredContent?.start);

/** How many items have each key; `keys` are listed even when no item has them (a worker that took none). */
function countBy<T>(
  items: readonly T[],
  key: (item: T) => string,
  keys: string[] = [],
): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(keys.map((name) => [name, 0]));
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** The repetition in the middle when sorted by `value` (the upper one of an even count). */
function middle<T>(runs: readonly T[], value: (run: T) => number): T {
  const sorted = [...runs].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor(sorted.length / 2)] as T;
}

/** Length of the union of [start, end] intervals: time during which at least one ran. */
function coveredMs(intervals: Array<[number, number]>): number {
  let total = 0;
  let reach = Number.NEGATIVE_INFINITY;
  for (const [start, end] of [...intervals].sort((a, b) => a[0] - b[0])) {
    const from = Math.max(start, reach);
    if (end > from) total += end - from;
    reach = Math.max(reach, end);
  }
  return total;
}

const records = (server: string, count: number, ms: number) =>
  Array.from({ length: count }, () => ({ server, tool: 'record', args: { ms } }));

/**
 * Serialized lanes and fair share on one fleet of three workers (docs/semantics.md §1, issue 14):
 * 1. a `concurrency: 1` server's efficiency (1 call per tool time is ideal) with one worker and with
 *    three, bursts alternating; 2. a mixed burst over two serialized servers and a concurrent one: each
 *    lane's efficiency, the queued time and how much of the time each worker had a call running;
 * 3. team B floods a serialized server, then team A sends one call: how long A waits, with
 *    `fairness: teams` and with `fifo`, counted from the recorder's own start times.
 */
export function lanes(options: LanesOptions): Promise<LanesResult> {
  return withScope(async (scope) => {
    // Every server is the recorder: `concurrency: 1` unless said otherwise.
    const recorder = (extra: ServerEntry = {}) =>
      exampleServer('recorder', { idempotent: ['record'], concurrency: 1, ...extra });
    const fleet = scope.add(
      benchFleet('bench-lanes', () => ({
        [SOLO]: recorder(),
        [TRIO]: recorder(),
        ...Object.fromEntries(LANES.map((lane) => [lane, recorder()])),
        [WIDE]: recorder({ concurrency: options.wideConcurrency }),
        [FAIR]: recorder({ fairness: 'teams' }),
        [FIFO]: recorder({ fairness: 'fifo' }),
      })),
    );
    const shared = [TRIO, ...LANES, WIDE, FAIR, FIFO];
    progress('lanes: starting three workers');
    await all(
      WORKERS.map((id, index) =>
        fleet.startWorker({ id, servers: index === 0 ? [SOLO, ...shared] : shared }),
      ),
    );
    const dispatchers: Partial<Record<Backend, ToolCallDispatcher>> = { redis: await fleet.dispatcher() };
    const ids = new CallIds('bench-lanes');
    progress('lanes: warming up');
    await dispatchBurst(
      dispatchers.redis as ToolCallDispatcher,
      ids,
      [SOLO, ...shared].flatMap((server) => records(server, 6, 1)),
    );
    if (WITH_POSTGRES) {
      // Only the lanes compared: the serialized servers and the two fairness modes.
      const pgShared = [TRIO, FAIR, FIFO];
      const pgFleet = scope.add(
        benchFleetOn('postgres', 'bench-lanes', () => ({
          [SOLO]: recorder(),
          [TRIO]: recorder(),
          [FAIR]: recorder({ fairness: 'teams' }),
          [FIFO]: recorder({ fairness: 'fifo' }),
        })),
      );
      progress('lanes: starting three workers on PostgreSQL');
      await all(
        WORKERS.map((id, index) =>
          pgFleet.startWorker({ id, servers: index === 0 ? [SOLO, ...pgShared] : pgShared }),
        ),
      );
      dispatchers.postgres = await pgFleet.dispatcher();
      await dispatchBurst(
        dispatchers.postgres,
        ids,
        [SOLO, ...pgShared].flatMap((server) => records(server, 6, 1)),
      );
    }
    const backends = Object.keys(dispatchers) as Backend[];
    const on = (backend: Backend) => dispatchers[backend] as ToolCallDispatcher;

    const serialLanes = await serialBursts(dispatchers, ids, options);
    const mixed = await mixedBursts(on('redis'), ids, options);
    const fairness: Record<Backend, FairnessRun[]> = { redis: [], postgres: [] };
    for (let repetition = 0; repetition < options.fairnessRepetitions; repetition++) {
      const order = repetition % 2 === 0 ? [FAIR, FIFO] : [FIFO, FAIR];
      for (const backend of rotate(backends, repetition))
        for (const server of order) {
          const run = await floodThenOne(on(backend), ids, server, options);
          fairness[backend].push(run);
          progress(
            `lanes: fairness ${run.fairness} (${backend}): ${run.bAhead} of team B's calls ran ahead of A's; A waited ${run.aWaitCalls.toFixed(1)} calls' time`,
          );
        }
    }
    for (const runs of Object.values(fairness))
      runs.sort((a, b) => (a.fairness === b.fairness ? 0 : a.fairness === 'teams' ? -1 : 1));
    return {
      toolMs: options.toolMs,
      serial: serialLanes.redis ?? [],
      mixed,
      floodToolMs: options.floodToolMs,
      floodCalls: options.floodCalls,
      fairness: fairness.redis,
      ...(dispatchers.postgres
        ? { postgres: { serial: serialLanes.postgres ?? [], fairness: fairness.postgres } }
        : {}),
    };
  });
}
/** Part 1: `serialCalls` at once on the 1-worker and the 3-worker serialized server, taking turns (and backends). */
async function serialBursts(
  dispatchers: Partial<Record<Backend, ToolCallDispatcher>>,
  ids: CallIds,
  options: LanesOptions,
): Promise<Partial<Record<Backend, SerialLane[]>>> {
  const ideal = 1000 / options.toolMs;
  const backends = Object.keys(dispatchers) as Backend[];
  const runs: Record<string, SerialRun[]> = {};
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    for (const backend of rotate(backends, repetition))
      for (const server of repetition % 2 === 0 ? [SOLO, TRIO] : [TRIO, SOLO]) {
        const start = performance.now();
        const outcomes = await dispatchBurst(
          dispatchers[backend] as ToolCallDispatcher,
          ids,
          records(server, options.serialCalls, options.toolMs),
        );
        const wallMs = since(start);
        const perSecond = options.serialCalls / (wallMs / 1000);
        const key = `${backend}:${server}`;
        runs[key] ??= [];
        runs[key].push({
          calls: options.serialCalls,
          wallMs,
          perSecond,
          efficiency: perSecond / ideal,
          callsPerWorker: countBy(
            outcomes,
            (outcome) => outcome.workerId ?? '?',
            server === SOLO ? WORKERS.slice(0, 1) : WORKERS,
          ),
        });
      }
  }
  const lanes: Partial<Record<Backend, SerialLane[]>> = {};
  for (const backend of backends)
    lanes[backend] = [SOLO, TRIO].map((server) => {
      const done = runs[`${backend}:${server}`] ?? [];
      const lane = {
        workers: server === SOLO ? 1 : WORKERS.length,
        runs: done,
        median: middle(done, (run) => run.efficiency),
      };
      progress(
        `lanes: serialized (${backend}), ${lane.workers} worker(s): ${lane.median.perSecond.toFixed(1)}/s, efficiency ${lane.median.efficiency.toFixed(2)}`,
      );
      return lane;
    });
  return lanes;
}

/** Part 2: `mixedCalls` at once over two serialized servers and the concurrent one. */
async function mixedBursts(
  dispatcher: ToolCallDispatcher,
  ids: CallIds,
  options: LanesOptions,
): Promise<LanesResult['mixed']> {
  const servers = [...LANES, WIDE];
  const perServer = Math.round(options.mixedCalls / servers.length);
  const runs: MixedRun[] = [];
  for (let repetition = 0; repetition < options.repetitions; repetition++) {
    const startEpoch = Date.now();
    const start = performance.now();
    // One burst per server, all submitted in the same tick; each notes when its last outcome arrived.
    const groups = await all(
      servers.map(async (server) => {
        const outcomes = await dispatchBurst(dispatcher, ids, records(server, perServer, options.toolMs));
        return { server, outcomes, wallMs: since(start) };
      }),
    );
    const wallMs = since(start);
    const endEpoch = Date.now();
    const outcomes = groups.flatMap((group) => group.outcomes);
    runs.push({
      calls: outcomes.length,
      wallMs,
      queuedP50Ms: median(outcomes.map((outcome) => outcome.queuedMs)),
      servers: groups.map((group) => {
        const concurrency = group.server === WIDE ? options.wideConcurrency : 1;
        const perSecond = group.outcomes.length / (group.wallMs / 1000);
        return {
          server: group.server,
          concurrency,
          calls: group.outcomes.length,
          wallMs: group.wallMs,
          perSecond,
          efficiency: perSecond / ((concurrency * 1000) / options.toolMs),
          queuedP50Ms: median(group.outcomes.map((outcome) => outcome.queuedMs)),
        };
      }),
      workers: WORKERS.map((worker) => {
        const own = outcomes.filter((outcome) => outcome.workerId === worker);
        const running = own.map((outcome): [number, number] => [
          outcome.startedAt ?? outcome.finishedAt,
          outcome.finishedAt,
        ]);
        return {
          worker,
          calls: own.length,
          callsByServer: countBy(own, (outcome) => outcome.server),
          busyShare: coveredMs(running) / (endEpoch - startEpoch),
        };
      }),
    });
  }
  const picked = middle(runs, (run) => run.wallMs);
  progress(
    `lanes: mixed burst of ${picked.calls}: ${picked.servers.map((s) => `${s.server} ${s.efficiency.toFixed(2)}`).join(', ')}; busy ${picked.workers.map((w) => w.busyShare.toFixed(2)).join(', ')}`,
  );
  return { runs, median: picked };
}

/**
 * Part 3: team B submits its flood; once the server has finished a tenth of it, team A submits one
 * call. Who ran when comes from the recorder's own start times.
 */
async function floodThenOne(
  dispatcher: ToolCallDispatcher,
  ids: CallIds,
  server: string,
  options: LanesOptions,
): Promise<FairnessRun> {
  const call = (team: string) =>
    dispatcher.dispatch({
      jobId: ids.jobId,
      toolCallId: ids.id(),
      server,
      tool: 'record',
      arguments: { ms: options.floodToolMs },
      team,
    });
  const flood = Array.from({ length: options.floodCalls }, () => call('team-b'));
  // A arrives once a tenth of the flood has run: every call of it is queued by then and the lane is in its
  // steady pace (its first calls run slower, while the dispatcher is still adding the rest).
  let finished = 0;
  await new Promise<void>((resolve) => {
    for (const pending of flood)
      void pending.then(() => {
        finished += 1;
        if (finished === Math.ceil(options.floodCalls / 10)) resolve();
      });
  });
  const submittedAt = epochNow();
  const single = await call('team-a');
  const floodOutcomes = await Promise.all(flood);
  expectOk([...floodOutcomes, single], `${server} flood`);
  const aStart = recordedStart(single);
  const bStarts = floodOutcomes.map(recordedStart).sort((a, b) => a - b);
  // The lane's pace over the whole flood: its calls run back to back, so this is one call's time.
  const callMs = ((bStarts.at(-1) as number) - (bStarts[0] as number)) / (bStarts.length - 1);
  const aWaitMs = aStart - submittedAt;
  return {
    fairness: server === FAIR ? 'teams' : 'fifo',
    bWaiting: bStarts.filter((at) => at > submittedAt).length,
    bAhead: bStarts.filter((at) => at > submittedAt && at < aStart).length,
    aWaitMs,
    callMs,
    aWaitCalls: aWaitMs / callMs,
  };
}
