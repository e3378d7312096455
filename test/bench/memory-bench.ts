/**
 * Only the "Memory by how a process is run" scenario of `npm run bench`, printed (nothing is written):
 * the same deployment from source, compiled with the shipped Node flags, and compiled without them.
 * `npm run bench:memory` (builds first), or after `npm run build`:
 * `SWITCHYARD_COMPILED=1 node --conditions=@switchyard/source --import tsx test/bench/memory-bench.ts`.
 * `SWITCHYARD_BENCH_MEMORY_ROUNDS=3` measures every variant that many times, taking turns (the machine is noisy).
 */
import { loadavg } from 'node:os';
import { z } from 'zod';
import { closeEverything, progress, stopEverythingOnSignals } from './harness.ts';
import { table } from './report.ts';
import { renderRssByMode } from './report-memory.ts';
import { RSS_BY_MODE_SETTINGS, rssByMode } from './scenarios/rss-modes.ts';

const rounds = z.coerce
  .number()
  .int()
  .min(1)
  .max(10)
  .safeParse(process.env.SWITCHYARD_BENCH_MEMORY_ROUNDS ?? 1);
if (!rounds.success) {
  progress(`SWITCHYARD_BENCH_MEMORY_ROUNDS (1–10): ${z.prettifyError(rounds.error)}`);
  process.exit(2);
}

const roundCount = rounds.data;
stopEverythingOnSignals();

async function main(): Promise<void> {
  for (let round = 1; round <= roundCount; round += 1) {
    const loadStart = loadavg()[0] ?? 0;
    const result = await rssByMode(RSS_BY_MODE_SETTINGS);
    process.stdout.write(
      `\nround ${round}: load average ${loadStart.toFixed(1)} → ${(loadavg()[0] ?? 0).toFixed(1)}\n`,
    );
    process.stdout.write(`${renderRssByMode(result, table).join('\n\n')}\n`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void closeEverything().finally(() => process.exit(1));
  },
);
