import type { WaitingRunsPass, WaitingRunsResult } from './scenarios/waiting-runs.ts';
import { mib, ms, perSecond } from './stats.ts';

type Table = (headers: string[], alignRight: boolean[], rows: string[][]) => string;

/** The goal of issue 22 for many waiting runs on one replica. */
export const WAITING_RUNS_GOAL = { efficiency: 0.9, peakRssBytes: 400 * 2 ** 20, eventLoopP99Ms: 50 };

const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;

/** Which parts of the goal a pass meets, as a cell: "yes", or what it missed. */
export function goalMet(pass: WaitingRunsPass): string {
  const missed = [
    pass.efficiency < WAITING_RUNS_GOAL.efficiency ? 'throughput' : '',
    pass.rss.peak > WAITING_RUNS_GOAL.peakRssBytes ? 'RSS' : '',
    pass.eventLoop.burst.p99 > WAITING_RUNS_GOAL.eventLoopP99Ms ? 'event loop' : '',
  ].filter(Boolean);
  return missed.length === 0 ? 'yes' : `no: ${missed.join(', ')}`;
}

/** The `waitingRuns` scenario as Markdown paragraphs: one row per `agentRunConcurrency`. */
export function renderWaitingRuns(result: WaitingRunsResult, table: Table): string {
  const first = result.passes[0];
  const ideal = first ? `${seconds(first.idealRunMs)} per run, ${perSecond(first.idealPerSecond)}` : 'n/a';
  return [
    `**Many waiting runs on one replica**: ${result.jobs} agent jobs submitted at once ` +
      `(${result.submitInFlight} requests in flight) to one orchestrator with one worker (Redis); each run is a ` +
      `scripted model step that waits ${ms(result.modelDelayMs)} (\`delayMs\`, as a real model would), one echo ` +
      `call, and a second model step of ${ms(result.modelDelayMs)}. Ideal: every run at once, nothing but the ` +
      `waits and the call costing anything (${ideal}). One deployment per \`agentRunConcurrency\`. Wall: first ` +
      'job created → last finished; job: created → finished, slot wait: created → started, run: started → ' +
      "finished (job rows). Event-loop delay: the orchestrator's `nodejs_eventloop_lag_*` over the burst " +
      `(its 10 ms sampling interval included; idle ${ms(first?.eventLoop.idle.p50 ?? Number.NaN)} at p50). Goal: ` +
      `≥ ${WAITING_RUNS_GOAL.efficiency} of ideal, peak RSS ≤ ${mib(WAITING_RUNS_GOAL.peakRssBytes)}, event-loop ` +
      `p99 ≤ ${ms(WAITING_RUNS_GOAL.eventLoopP99Ms)}. CPU per job: the orchestrator's \`process_cpu_seconds_total\` ` +
      'over the burst / jobs; its one event loop finishes at most 1 s / that many jobs a second.',
    table(
      [
        '`agentRunConcurrency`',
        'wall',
        'jobs/s',
        'of ideal',
        'job p50 / p99',
        'slot wait p50',
        'run p50 / p99',
        'RSS idle / peak / end',
        'event-loop delay p50 / p99 / max',
        'CPU per job',
        'goal met?',
      ],
      [true, true, true, true, true, true, true, true, true, true, false],
      result.passes.map((pass) => [
        String(pass.agentRunConcurrency),
        seconds(pass.wallMs),
        perSecond(pass.perSecond),
        `${pass.efficiency.toFixed(2)}×`,
        `${seconds(pass.jobMs.p50)} / ${seconds(pass.jobMs.p99)}`,
        seconds(pass.queuedMs.p50),
        `${seconds(pass.runMs.p50)} / ${seconds(pass.runMs.p99)}`,
        `${mib(pass.rss.idle)} / ${mib(pass.rss.peak)} / ${mib(pass.rss.end)}`,
        `${ms(pass.eventLoop.burst.p50)} / ${ms(pass.eventLoop.burst.p99)} / ${ms(pass.eventLoop.burst.max)}`,
        ms(pass.cpuMsPerJob),
        goalMet(pass),
      ]),
    ),
  ].join('\n\n');
}
