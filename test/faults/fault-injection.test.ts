import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { TEST_BACKEND } from '../support/backend.ts';
import { CpuContention } from '../support/contention.ts';
import { recordedIntervals } from '../support/intervals.ts';
import { DedicatedPostgres } from '../support/postgres-server.ts';
import { signalAll } from '../support/processes.ts';
import { SeededRandom } from '../support/random.ts';
import { DedicatedRedis } from '../support/redis-server.ts';
import { Chaos, FAULT_KINDS, type FaultKind, REDIS_FAULT_KINDS } from './chaos.ts';
import { FaultCluster } from './cluster.ts';
import { JobWatch, readJobs, streamEnds } from './job-watch.ts';
import {
  type Evidence,
  type Finding,
  inFlightDuringFreezes,
  PROMISES,
  type RecordedCall,
} from './promises.ts';
import { planJobs, Submitter } from './workload.ts';

/** How often each fault is injected; the order is shuffled by the seed. */
const SCHEDULE: Record<FaultKind, number> = {
  'worker-kill': 2,
  'mcp-server-kill': 2,
  'orchestrator-kill': 2,
  'redis-crash': 2,
  'redis-restart-empty': 1,
  'worker-freeze': 4,
  'redis-freeze': 2,
  'pg-terminate': 2,
  'pg-restart': 2,
};
/** After the last fault, how long every job gets to reach a final status on its own. */
const SETTLE_MS = 150_000;
/** Jobs submitted before the first fault; the rest arrive in waves, one before each fault. */
const FIRST_WAVE = 24;

const random = SeededRandom.fromEnv('FAULTS_SEED');
/** FAULTS_KINDS=worker-freeze,redis-freeze narrows the schedule to some faults, e.g. while fixing one. */
const wantedKinds = selectedKinds(process.env.FAULTS_KINDS);
/**
 * On the postgres backend (SWITCHYARD_TEST_BACKEND=postgres) the queues live in the suite's own
 * PostgreSQL and there is no Redis to fault: its faults are left out, and pg-terminate and pg-restart
 * hit the queues as well as the jobs.
 */
const kinds =
  TEST_BACKEND === 'postgres' ? wantedKinds.filter((kind) => !REDIS_FAULT_KINDS.includes(kind)) : wantedKinds;
const leftOut = wantedKinds.filter((kind) => !kinds.includes(kind));
const contention = CpuContention.wanted('FAULTS_CONTENTION');
const reproduce = `${TEST_BACKEND === 'postgres' ? 'SWITCHYARD_TEST_BACKEND=postgres ' : ''}FAULTS_SEED=${random.seed} FAULTS_CONTENTION=${contention ? 1 : 0}${
  process.env.FAULTS_KINDS ? ` FAULTS_KINDS=${kinds.join(',')}` : ''
}`;

/**
 * Issue 8's fault-injection suite: a few thousand tool calls from many concurrent jobs while
 * workers, MCP servers and orchestrator replicas are killed, workers are frozen past their lock,
 * the suite's own Redis is crashed and frozen and its own PostgreSQL loses every backend and
 * restarts; optionally with a busy loop on every core. Each promise is its own test below, judged
 * by the servers' own ledgers; a broken one prints how often and a few example calls.
 * On the postgres backend the same promises are judged with the queues in that PostgreSQL and no Redis.
 */
describe('fault injection under mixed load', () => {
  const redis = TEST_BACKEND === 'redis' ? new DedicatedRedis() : undefined;
  const postgres = new DedicatedPostgres();
  const cpu = new CpuContention();
  let cluster: FaultCluster | undefined;
  let findings: Map<string, Finding> | undefined;
  let setupMs = 0;

  beforeAll(async () => {
    console.info(
      `fault suite: backend ${TEST_BACKEND}, seed ${random.seed}, contention ${contention ? 'on' : 'off'}; rerun: ${reproduce}`,
    );
    if (leftOut.length > 0)
      console.info(
        `fault suite: not scheduled on the ${TEST_BACKEND} backend (the queues have no Redis): ${leftOut.join(', ')}`,
      );
    const setupStart = performance.now();
    if (contention) await cpu.start();
    await Promise.all([redis?.start(), postgres.start()]);
    cluster = new FaultCluster(redis, postgres);
    await cluster.start();
    setupMs = Math.round(performance.now() - setupStart);
  }, 240_000);

  afterAll(async () => {
    // A run cut short may have left something frozen; nothing can be stopped cleanly while it is.
    const pids = cluster?.deployment.group.processes.map((proc) => proc.pid) ?? [];
    signalAll([...pids, ...(redis?.pid ? [redis.pid] : [])], 'SIGCONT');
    await Promise.race([
      cluster?.close().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 30_000)),
    ]);
    await Promise.allSettled([redis?.stop(), postgres.stop(), cpu.stop()]);
  }, 120_000);

  it('drives the workload through every fault', { timeout: 420_000 }, async () => {
    const live = cluster as FaultCluster;
    const started = Date.now();
    const watch = new JobWatch(() => live.api());
    const submitter = new Submitter(
      () => live.api(),
      (id) => watch.add(id),
    );
    const chaos = new Chaos(live, random, () => watch.open);

    // A steady stream of jobs, so every fault meets work in flight however fast the fleet drains it.
    const jobs = random.shuffle(planJobs(`faults-${random.seed}-${started}`));
    const schedule = random.shuffle(kinds.flatMap((kind) => Array<FaultKind>(SCHEDULE[kind]).fill(kind)));
    const wave = Math.ceil((jobs.length - FIRST_WAVE) / schedule.length);
    submitter.submit(jobs.splice(0, FIRST_WAVE));
    await submitter.drained();
    for (const kind of schedule) {
      // When the next fault lands is part of the seeded schedule too.
      await new Promise((resolve) => setTimeout(resolve, random.int(200, 1_200)));
      submitter.submit(jobs.splice(0, wave));
      await chaos.inject(kind);
    }
    const chaosMs = Date.now() - started;
    await Promise.all([submitter.drained(), chaos.replacementsStarted()]);
    // Without any replica left nothing can finish: no point waiting out the whole settle time.
    const settleStarted = Date.now();
    const open = await watch.settle(SETTLE_MS, live.noOrchestratorLeft());

    live.notePidOwners();
    const { jobs: final, source } = await readJobs(submitter.ids, live.api(), {
      url: postgres.url,
      schema: live.deployment.schema,
    });
    const evidence: Evidence = {
      jobs: final,
      open,
      planned: submitter.planned,
      notes: readLedger(live.deployment.path('notes.jsonl')),
      serial: recordedIntervals(live.deployment.path('serial.jsonl')) as RecordedCall[],
      pair: recordedIntervals(live.deployment.path('pair.jsonl')) as RecordedCall[],
      freezes: chaos.freezes,
      kills: chaos.kills,
      lostLocks: live.lostLocks(),
      pidOwners: live.pidOwners,
      exits: live.unexpectedExits(),
      redisDataLosses: chaos.records.filter((record) => record.kind === 'redis-restart-empty').length,
      streamEnds: await streamEnds(live.api(), final, open),
    };
    findings = new Map(PROMISES.map(({ name, check }) => [name, check(evidence)]));

    const outcomes = final.flatMap((job: Json) => job.toolCalls ?? []).map((call: Json) => call.outcome);
    console.info(
      JSON.stringify({
        backend: TEST_BACKEND,
        seed: random.seed,
        contention,
        setupMs,
        chaosMs,
        totalMs: Date.now() - started,
        readFrom: source,
        jobsByStatus: countBy(final.map((job: Json) => String(job.status))),
        notSubmitted: submitter.failed.length,
        openAtTheEnd: open.length,
        // A job still open to the watch: when it ended (if it did) tells a slow job from a stream that
        // missed its final status.
        openJobs: open.map((id) => openJobDetail(final, id, settleStarted)),
        streamEnds: evidence.streamEnds,
        calls: outcomes.length,
        outcomesByStatus: countBy(outcomes.map((outcome: Json) => String(outcome?.status ?? 'none'))),
        faults: chaos.records.map((record) => ({
          ...record.detail,
          kind: record.kind,
          ms: record.ms,
          openJobs: record.openJobs,
        })),
        inFlightOnFrozenWorkers: inFlightDuringFreezes(evidence),
        faultsOnAnIdleSystem: chaos.records.filter((record) => record.openJobs === 0).length,
        promises: Object.fromEntries(
          [...findings].map(([name, finding]) => [
            name,
            finding.excused ? `${finding.broken} broken, ${finding.excused.count} excused` : finding.broken,
          ]),
        ),
      }),
    );
    const failedFaults = chaos.records.filter(
      (record) => 'error' in record.detail || 'skipped' in record.detail,
    );
    // The logs of a run that broke a promise, whose jobs the API never took, or whose faults (a
    // replacement that never came up) could not be injected, say why.
    if (
      [...findings.values()].some((finding) => finding.broken > 0) ||
      submitter.failed.length > 0 ||
      failedFaults.length > 0
    )
      keepLogs(live);
    for (const [name, finding] of findings) {
      if (finding.broken > 0) console.error(diagnosis(name, finding));
      else if (finding.excused?.count)
        console.info(
          `${name}: excused (a call whose worker no longer owned it): ${JSON.stringify(finding.excused)}`,
        );
    }

    // Every job got in and the faults themselves happened, or the promises below prove little.
    expect(submitter.failed, `jobs the API never accepted (${reproduce})`).toEqual([]);
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

/** A broken promise's evidence beyond the summary: every process's log lines and stderr, kept in a file. */
function keepLogs(cluster: FaultCluster): void {
  const file = join(tmpdir(), `switchyard-faults-${random.seed}-${Date.now()}.jsonl`);
  for (const proc of cluster.deployment.group.processes) {
    const lines = proc.logs.map((log) => JSON.stringify({ process: proc.name, ...log }));
    const stderr = proc.stderr.join('');
    if (stderr) lines.push(JSON.stringify({ process: proc.name, stderr }));
    appendFileSync(file, lines.map((line) => `${line}\n`).join(''));
  }
  console.error(`fault suite: every process's logs are in ${file}`);
}

function selectedKinds(raw: string | undefined): FaultKind[] {
  if (!raw) return [...FAULT_KINDS];
  const chosen = raw.split(',').map((kind) => kind.trim());
  const unknown = chosen.filter((kind) => !(FAULT_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0)
    throw new Error(`FAULTS_KINDS: unknown fault(s) ${unknown.join(', ')}; known: ${FAULT_KINDS.join(', ')}`);
  return chosen as FaultKind[];
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function diagnosis(name: string, finding: Finding): string {
  const excused = finding.excused
    ? `; ${finding.excused.count} excused (a call whose worker no longer owned it)`
    : '';
  const divided = finding.breakdown ? `; by kind: ${JSON.stringify(finding.breakdown)}` : '';
  return `BROKEN: ${name}: ${finding.broken} case(s)${excused}${divided}; rerun with ${reproduce}; examples:\n${JSON.stringify(finding.examples, null, 1)}`;
}

function openJobDetail(jobs: Json[], id: string, settleStarted: number): Json {
  const job = jobs.find((candidate) => candidate.id === id);
  const finishedAt = typeof job?.finishedAt === 'string' ? Date.parse(job.finishedAt) : undefined;
  return {
    job: id,
    status: job?.status,
    finishedSinceSettleStartMs: finishedAt === undefined ? null : finishedAt - settleStarted,
  };
}
