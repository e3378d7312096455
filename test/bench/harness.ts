import type { ToolCallOutcome } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { Fleet, type ServerEntry } from '../support/fleet.ts';
import { REDIS_URL } from '../support/redis.ts';

const started = performance.now();

/** One progress line on stderr, with the time since the benchmark started. */
export function progress(message: string): void {
  process.stderr.write(
    `[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`,
  );
}

/**
 * The config schema's default worker settings (production), not the test harness's fast failure
 * detection: a benchmark should pay what a deployment pays (heartbeats, lock renewals, stalled checks).
 * Only the shutdown grace is short, so that stopping the fleet does not wait.
 */
export const PRODUCTION_WORKER_SETTINGS = {
  heartbeatMs: 2_000,
  lockDurationMs: 30_000,
  stalledIntervalMs: 15_000,
  shutdownGraceMs: 5_000,
};

/** Processes log at the production default level: per-call debug lines would be extra work. */
export const BENCH_PROCESS_ENV = { LOG_LEVEL: 'info' };

export interface Closable {
  close(): Promise<void>;
}

/** Everything a scenario opened; closed newest first when the scenario ends, however it ends. */
export class Scope implements Closable {
  private readonly resources: Closable[] = [];
  private closed = false;

  add<T extends Closable>(resource: T): T {
    if (this.closed) {
      void resource.close();
      throw new Error('scope already closed');
    }
    this.resources.push(resource);
    return resource;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const resource of this.resources.splice(0).reverse()) {
      await resource.close().catch((error: unknown) => progress(`cleanup failed: ${String(error)}`));
    }
  }
}

const openScopes = new Set<Scope>();

/** Runs `body` in a fresh scope and closes the scope afterwards, also when `body` fails or on Ctrl-C. */
export async function withScope<R>(body: (scope: Scope) => Promise<R>): Promise<R> {
  const scope = new Scope();
  openScopes.add(scope);
  try {
    return await body(scope);
  } finally {
    openScopes.delete(scope);
    await scope.close();
  }
}

/** Closes every scope still open; for a signal handler. */
export async function closeEverything(): Promise<void> {
  for (const scope of [...openScopes]) {
    openScopes.delete(scope);
    await scope.close();
  }
}

/** Ctrl-C or SIGTERM stops every process the benchmark started before it exits (once, however often sent). */
export function stopEverythingOnSignals(): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      progress(`${signal}: stopping every process the benchmark started`);
      void closeEverything().finally(() => process.exit(130));
    });
  }
}

/** Like Promise.all, but waits for every promise to settle before throwing the first failure. */
export async function all<T extends readonly unknown[] | []>(
  values: T,
): Promise<{ -readonly [P in keyof T]: Awaited<T[P]> }> {
  const results: Array<PromiseSettledResult<unknown>> = await Promise.allSettled(
    values as readonly unknown[],
  );
  const settled: unknown[] = [];
  for (const result of results) {
    if (result.status === 'rejected') throw result.reason;
    settled.push(result.value);
  }
  return settled as {
    -readonly [P in keyof T]: Awaited<T[P]>;
  };
}

/**
 * A Fleet with production worker settings whose processes log at info; on the machine's Redis unless
 * `clusterNodes` names a Redis Cluster (`host:port,…`) for it.
 */
export function benchFleet(
  label: string,
  servers: (dir: string) => Record<string, ServerEntry>,
  clusterNodes?: string,
): Fleet {
  const fleet = new Fleet(label, servers, PRODUCTION_WORKER_SETTINGS, {}, REDIS_URL, clusterNodes);
  Object.assign(fleet.processEnv, BENCH_PROCESS_ENV);
  return fleet;
}

/** Throws unless every outcome is `ok`, naming the statuses seen. */
export function expectOk(outcomes: ToolCallOutcome[], what: string): void {
  const bad = outcomes.filter((outcome) => outcome.status !== 'ok');
  if (bad.length === 0) return;
  const counts: Record<string, number> = {};
  for (const outcome of bad) counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
  throw new Error(
    `${what}: ${bad.length} of ${outcomes.length} calls did not end ok: ${JSON.stringify(counts)}; first: ${bad[0]?.text}`,
  );
}

/** Unique tool-call ids (the dispatcher dedupes by (job id, tool call id)). */
export class CallIds {
  private next = 0;
  constructor(readonly jobId: string) {}
  id(): string {
    this.next += 1;
    return `c${this.next}`;
  }
}

/** One call through Switchyard's dispatcher; throws unless it ended ok. */
export async function dispatchOk(
  dispatcher: ToolCallDispatcher,
  ids: CallIds,
  server: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<ToolCallOutcome> {
  const outcome = await dispatcher.dispatch({
    jobId: ids.jobId,
    toolCallId: ids.id(),
    server,
    tool,
    arguments: args,
  });
  expectOk([outcome], `${server}/${tool}`);
  return outcome;
}

/** `count` calls dispatched at once; resolves with every outcome once all have settled, checked ok. */
export async function dispatchBurst(
  dispatcher: ToolCallDispatcher,
  ids: CallIds,
  calls: Array<{ server: string; tool: string; args: Record<string, unknown> }>,
): Promise<ToolCallOutcome[]> {
  const outcomes = await Promise.all(
    calls.map((call) =>
      dispatcher.dispatch({
        jobId: ids.jobId,
        toolCallId: ids.id(),
        server: call.server,
        tool: call.tool,
        arguments: call.args,
      }),
    ),
  );
  expectOk(outcomes, `burst of ${calls.length}`);
  return outcomes;
}

/**
 * Measures `ways` in interleaved rounds: each round runs every way `calls(name)` times, the ways taking
 * turns going first, so a shared machine that slows down mid-run slows every way alike. `label` reports
 * progress every fifth round. Returns each way's samples.
 */
export async function interleavedRounds<K extends string>(
  ways: Record<K, () => Promise<number>>,
  rounds: number,
  calls: (name: K) => number,
  label?: string,
): Promise<Record<K, number[]>> {
  const order = Object.keys(ways) as K[];
  const samples = Object.fromEntries(order.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (const name of rotate(order, round))
      for (let i = 0; i < calls(name); i++) samples[name].push(await ways[name]());
    if (label && ((round + 1) % 5 === 0 || round + 1 === rounds))
      progress(`${label}: round ${round + 1}/${rounds}`);
  }
  return samples;
}

/** Rotates `items` left by `by` places, so interleaved measurements take turns going first. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
