/**
 * Only the waiting-runs scenario of `npm run bench`, printed (nothing is written): many agent runs that
 * wait on their model, on one replica, once per `agentRunConcurrency`. `npm run bench:waiting-runs`
 * (builds first), or after `npm run build`:
 * `SWITCHYARD_COMPILED=1 node --conditions=@switchyard/source --import tsx test/bench/waiting-runs-bench.ts`
 * `SWITCHYARD_BENCH_WAITING_CONCURRENCIES=20,1000` runs only those passes, `SWITCHYARD_BENCH_WAITING_JOBS=50`
 * submits that many jobs instead (a quick try of the scenario itself).
 */
import { loadavg } from 'node:os';
import { z } from 'zod';
import { closeEverything, progress, stopEverythingOnSignals } from './harness.ts';
import { table } from './report.ts';
import { renderWaitingRuns } from './report-waiting-runs.ts';
import { WAITING_RUNS_SETTINGS, waitingRuns } from './scenarios/waiting-runs.ts';

const Overrides = z.object({
  concurrencies: z.array(z.coerce.number().int().min(1).max(1000)).min(1).optional(),
  jobs: z.coerce.number().int().min(1).max(10_000).optional(),
});
const list = (value: string | undefined) => value?.trim().split(',').filter(Boolean);
const overrides = Overrides.safeParse({
  concurrencies: list(process.env.SWITCHYARD_BENCH_WAITING_CONCURRENCIES),
  jobs: process.env.SWITCHYARD_BENCH_WAITING_JOBS?.trim() || undefined,
});
if (!overrides.success) {
  progress(
    `SWITCHYARD_BENCH_WAITING_CONCURRENCIES (1–1000, comma-separated) or SWITCHYARD_BENCH_WAITING_JOBS: ${z.prettifyError(overrides.error)}`,
  );
  process.exit(2);
}

stopEverythingOnSignals();

const loadStart = loadavg()[0] ?? 0;
const { concurrencies, jobs } = overrides.data;
waitingRuns({
  ...WAITING_RUNS_SETTINGS,
  ...(concurrencies ? { concurrencies } : {}),
  ...(jobs ? { jobs } : {}),
}).then(
  (result) => {
    process.stdout.write(`${renderWaitingRuns(result, table)}\n\n`);
    process.stdout.write(
      `${new Date().toISOString()}: load average ${loadStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void closeEverything().finally(() => process.exit(1));
  },
);
