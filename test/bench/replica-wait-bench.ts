/**
 * Only the replica-wait scenario of `npm run bench`, printed (nothing is written): what WAIT costs a
 * non-idempotent call, without running the whole benchmark. After `npm run build`:
 * `SWITCHYARD_COMPILED=1 node --conditions=@switchyard/source --import tsx test/bench/replica-wait-bench.ts`
 */
import { closeEverything, progress } from './harness.ts';
import { table } from './report.ts';
import { renderReplicaWait, replicaWait } from './scenarios/replica-wait.ts';
import { ms } from './stats.ts';

const plus = (value: number) => `${value >= 0 ? '+' : '−'}${ms(Math.abs(value))}`;

replicaWait({ warmup: 20, rounds: 10, perRound: 20 }).then(
  (result) => {
    process.stdout.write(`${renderReplicaWait(result, table, { ms, plus }).join('\n\n')}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    progress(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    void closeEverything().finally(() => process.exit(1));
  },
);
