import type { LanesResult } from './scenarios/lanes.ts';
import { ms, perSecond, ratio } from './stats.ts';

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;

/** "w-lanes-1 34, w-lanes-2 33": calls per worker, in worker order. */
function perWorker(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([worker, calls]) => `${worker.replace(/^w-lanes-/, 'w')}: ${calls}`)
    .join(', ');
}

const percent = (share: number) => `${(share * 100).toFixed(0)} %`;

/** The serialized-lane and fair-share tables (test/bench/scenarios/lanes.ts), as Markdown paragraphs. */
export function renderLanes(result: LanesResult, table: Table): string[] {
  const { toolMs, mixed } = result;
  const wallTimes = mixed.runs.map((burst) => ms(burst.wallMs)).join(' / ');
  const run = mixed.median;
  const serialRows = result.serial.map((lane) => [
    String(lane.workers),
    String(lane.median.calls),
    perSecond(1000 / toolMs),
    perSecond(lane.median.perSecond),
    ratio(lane.median.efficiency, 1),
    lane.runs.map((burst) => burst.efficiency.toFixed(2)).join(' / '),
    perWorker(lane.median.callsPerWorker),
  ]);
  // A serialized lane next to the same lane alone on the three workers (the table above, same run).
  const alone = result.serial.at(-1)?.median.efficiency ?? Number.NaN;
  const laneRows = run.servers.map((server) => [
    `${server.server} (\`concurrency: ${server.concurrency}\`)`,
    String(server.calls),
    perSecond((server.concurrency * 1000) / toolMs),
    perSecond(server.perSecond),
    ratio(server.efficiency, 1),
    server.concurrency === 1 ? ratio(server.efficiency, alone) : '',
    ms(server.queuedP50Ms),
  ]);
  const workerRows = run.workers.map((worker) => [
    worker.worker,
    String(worker.calls),
    run.servers.map((server) => String(worker.callsByServer[server.server] ?? 0)).join(' / '),
    percent(worker.busyShare),
  ]);
  const fairRows = result.fairness.map((fair) => [
    `\`fairness: ${fair.fairness}\``,
    String(fair.bWaiting),
    String(fair.bAhead),
    ms(fair.aWaitMs),
    ms(fair.callMs),
    fair.aWaitCalls.toFixed(1),
  ]);
  return [
    `**Serialized lanes** (\`concurrency: 1\`, \`record\` of ${toolMs} ms, so the ideal is 1 call per ${toolMs} ms): ` +
      `${result.serial[0]?.median.calls ?? 0} calls submitted at once on a server served by one worker and on one ` +
      `served by three, bursts taking turns; the row is the median burst, efficiency of every burst next to it.`,
    table(
      ['workers', 'calls', 'ideal', 'achieved', 'efficiency', 'every burst', 'calls per worker'],
      [true, true, true, true, true, false, false],
      serialRows,
    ),
    `**Two serialized lanes and a concurrent one on three workers**: ${run.calls} calls of ${toolMs} ms submitted at ` +
      `once, spread evenly over the three servers; the burst with the median wall time of ${wallTimes} ` +
      `(queued time p50 over all its calls ${ms(run.queuedP50Ms)}). A lane's efficiency runs to its ` +
      'own last outcome, and "vs the lane alone" divides it by the efficiency of the 3-worker lane above; ' +
      'busy is the share of the wall time a worker had at least one call running (from the ' +
      "outcomes' startedAt / finishedAt). Once the concurrent server is done, only two calls can run at a time.",
    table(
      ['server', 'calls', 'ideal', 'achieved', 'efficiency', 'vs the lane alone', 'queued p50'],
      [false, true, true, true, true, true, true],
      laneRows,
    ),
    table(
      ['worker', 'calls', run.servers.map((server) => server.server).join(' / '), 'busy'],
      [false, true, true, true],
      workerRows,
    ),
    `**Fair share on a serialized server**: team B submits ${result.floodCalls} calls (\`record\` of ` +
      `${result.floodToolMs} ms) at once; once the server has finished a tenth of them, team A submits one call. Counted from the ` +
      "recorder's own start times: B's calls still waiting when A's arrived, those the server ran between A's " +
      "arrival and A's call, and A's wait (from its submission, through the dispatcher, to the server starting it) in the lane's call time (the mean gap between B's starts over the flood). The goal with " +
      '`teams` is at most 2 calls.',
    table(
      ['server', "B's calls waiting", "B's calls ahead of A", "A's wait", 'one call', "A's wait in calls"],
      [false, true, true, true, true, true],
      fairRows,
    ),
  ];
}
