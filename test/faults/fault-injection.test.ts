import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { CpuContention } from '../support/contention.ts';
import { recordedIntervals } from '../support/intervals.ts';
import { DedicatedPostgres } from '../support/postgres-server.ts';
import { signalAll } from '../support/processes.ts';
import { SeededRandom } from '../support/random.ts';
import { DedicatedRedis } from '../support/redis-server.ts';
import { Chaos, type FaultKind } from './chaos.ts';
import { FaultCluster } from './cluster.ts';
import { JobWatch, readJobs } from './job-watch.ts';
import { type Evidence, type Finding, PROMISES, type RecordedCall } from './promises.ts';
import { submitWorkload } from './workload.ts';

/** How often each fault is injected; the order is shuffled by the seed. */
const SCHEDULE: Record<FaultKind, number> = {
  'worker-kill': 2,
  'mcp-server-kill': 2,
  'orchestrator-kill': 2,
  'redis-crash': 2,
  'worker-freeze': 4,
  'redis-freeze': 2,
  'pg-terminate': 2,
  'pg-restart': 2,
};
/** After the last fault, how long every job gets to reach a final status on its own. */
const SETTLE_MS = 150_000;

const random = SeededRandom.fromEnv('FAULTS_SEED');
const contention = CpuContention.wanted('FAULTS_CONTENTION');
const reproduce = `FAULTS_SEED=${random.seed} FAULTS_CONTENTION=${contention ? 1 : 0}`;

/**
 * Issue 8's fault-injection suite: a few thousand tool calls from many concurrent jobs while
 * workers, MCP servers and orchestrator replicas are killed, workers are frozen past their lock,
 * the suite's own Redis is crashed and frozen and its own PostgreSQL loses every backend and
 * restarts; optionally with a busy loop on every core. Each promise is its own test below, judged
 * by the servers' own ledgers; a broken one prints how often and a few example calls.
 */
describe('fault injection under mixed load', () => {
  const redis = new DedicatedRedis();
  const postgres = new DedicatedPostgres();
  const cpu = new CpuContention();
  let cluster: FaultCluster | undefined;
  let findings: Map<string, Finding> | undefined;

  beforeAll(async () => {
    console.info(
      `fault suite: seed ${random.seed}, contention ${contention ? 'on' : 'off'}; rerun: ${reproduce}`,
    );
    if (contention) await cpu.start();
    await Promise.all([redis.start(), postgres.start()]);
    cluster = new FaultCluster(redis, postgres);
    await cluster.start();
  }, 180_000);

  afterAll(async () => {
    // A run cut short may have left something frozen; nothing can be stopped cleanly while it is.
    const pids = cluster?.deployment.group.processes.map((proc) => proc.pid) ?? [];
    signalAll([...pids, ...(redis.pid ? [redis.pid] : [])], 'SIGCONT');
    await Promise.race([
      cluster?.close().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 30_000)),
    ]);
    await Promise.allSettled([redis.stop(), postgres.stop(), cpu.stop()]);
  }, 120_000);

  it('drives the workload through every fault', { timeout: 420_000 }, async () => {
    const live = cluster as FaultCluster;
    const started = Date.now();
    const api = live.api();
    if (!api) throw new Error('no orchestrator is running');
    const workload = await submitWorkload(api);
    const watch = new JobWatch(workload.ids, () => live.api());
    const chaos = new Chaos(live, random, () => watch.open);

    const schedule = random.shuffle(
      Object.entries(SCHEDULE).flatMap(([kind, count]) => Array<FaultKind>(count).fill(kind as FaultKind)),
    );
    for (const kind of schedule) {
      // When the next fault lands is part of the seeded schedule too.
      await new Promise((resolve) => setTimeout(resolve, random.int(300, 2_000)));
      await chaos.inject(kind);
    }
    const chaosMs = Date.now() - started;
    const open = await watch.settle(SETTLE_MS);

    live.notePidOwners();
    const { jobs, source } = await readJobs(workload.ids, live.api(), {
      url: postgres.url,
      schema: live.deployment.schema,
    });
    const evidence: Evidence = {
      jobs,
      open,
      planned: workload.planned,
      notes: readLedger(live.deployment.path('notes.jsonl')),
      serial: recordedIntervals(live.deployment.path('serial.jsonl')) as RecordedCall[],
      pair: recordedIntervals(live.deployment.path('pair.jsonl')) as RecordedCall[],
      freezes: chaos.freezes,
      pidOwners: live.pidOwners,
      exits: live.unexpectedExits(),
    };
    findings = new Map(PROMISES.map(({ name, check }) => [name, check(evidence)]));

    const outcomes = jobs.flatMap((job: Json) => job.toolCalls ?? []).map((call: Json) => call.outcome);
    console.info(
      JSON.stringify({
        seed: random.seed,
        contention,
        chaosMs,
        totalMs: Date.now() - started,
        readFrom: source,
        jobsByStatus: countBy(jobs.map((job: Json) => String(job.status))),
        outcomesByStatus: countBy(outcomes.map((outcome: Json) => String(outcome?.status ?? 'none'))),
        faults: chaos.records.map((record) => ({
          ...record.detail,
          kind: record.kind,
          openJobs: record.openJobs,
        })),
        faultsOnAnIdleSystem: chaos.records.filter((record) => record.openJobs === 0).length,
        promises: Object.fromEntries(
          [...findings].map(([name, finding]) => [
            name,
            finding.excused ? `${finding.broken} broken, ${finding.excused.count} excused` : finding.broken,
          ]),
        ),
      }),
    );
    for (const [name, finding] of findings) {
      if (finding.broken > 0) console.error(diagnosis(name, finding));
      else if (finding.excused?.count)
        console.info(`${name}: excused (frozen worker's own call)`, finding.excused);
    }

    // The faults themselves must have happened, or the promises below prove nothing.
    const failedFaults = chaos.records.filter(
      (record) => 'error' in record.detail || 'skipped' in record.detail,
    );
    expect(failedFaults, `faults that could not be injected (${reproduce})`).toEqual([]);
    expect(chaos.records.map((record) => record.kind).sort()).toEqual([...schedule].sort());
  });

  for (const { name } of PROMISES) {
    it(name, () => {
      const finding = findings?.get(name);
      if (!finding) throw new Error(`the run did not finish, so this promise was not checked (${reproduce})`);
      expect(finding.broken, diagnosis(name, finding)).toBe(0);
    });
  }
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function diagnosis(name: string, finding: Finding): string {
  const excused = finding.excused ? `; ${finding.excused.count} excused (a frozen worker's own call)` : '';
  return `BROKEN: ${name}: ${finding.broken} case(s)${excused}; rerun with ${reproduce}; examples:\n${JSON.stringify(finding.examples, null, 1)}`;
}
