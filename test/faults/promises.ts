import { toolCallJobId } from '@switchyard/contracts';
import type { LedgerRecord } from '@switchyard/example-mcp-servers/ledger';
import type { Json } from '../support/api-client.ts';
import type { Interval } from '../support/intervals.ts';
import type { Freeze, Kill } from './chaos.ts';
import type { UnexpectedExit } from './cluster.ts';
import type { PlannedCall } from './workload.ts';

const FINAL = new Set(['succeeded', 'completed_with_errors', 'failed', 'cancelled']);
const COMPLETED = new Set(['succeeded', 'completed_with_errors']);
const EXAMPLES = 5;

export interface RecordedCall extends Interval {
  pid: number;
}

/** Everything the run left behind: what the API (or the database) says, and what the servers saw. */
export interface Evidence {
  jobs: Json[];
  /** Jobs whose event stream never showed a final status before the deadline (no replica, or not final). */
  open: string[];
  planned: Map<string, PlannedCall[]>;
  notes: LedgerRecord[];
  serial: RecordedCall[];
  pair: RecordedCall[];
  freezes: Freeze[];
  /** Workers the suite killed; their stdio servers outlive them (as after a real crash outside a pod). */
  kills: Kill[];
  /** Every time a worker logged that it lost a queue job's lock (so it stopped owning that call). */
  lostLocks: LockLoss[];
  pidOwners: Map<number, string>;
  exits: UnexpectedExit[];
  /** How often the suite made Redis lose its data (restarted empty): the only excuse for a lost queue job. */
  redisDataLosses: number;
  /** The jobs in `open` that the API shows final, with the status their event stream ends with now. */
  streamEnds: StreamEnd[];
}

export interface StreamEnd {
  job: string;
  status: string;
  /** The last `status` event of the job's stream, read again after the settle time. */
  streamEndsWith?: string;
  /** Why the stream could not be read again (no verdict on it then). */
  unreadable?: string;
}

export interface LockLoss {
  workerId: string;
  /** The BullMQ job id of the tool call (`toolCallJobId`). */
  bullJobId: string;
  at: number;
}

export interface Finding {
  broken: number;
  /** How the broken cases divide (e.g. by tool and outcome), when that helps to tell causes apart. */
  breakdown?: Record<string, number>;
  examples: unknown[];
  /** Cases the promise allows (a call whose worker no longer owned it still running), counted apart. */
  excused?: { count: number; examples: unknown[] };
}

interface CallRow {
  job: Json;
  call: Json;
  label: string;
}

function calls(evidence: Evidence): CallRow[] {
  return evidence.jobs.flatMap((job) =>
    (job.toolCalls ?? []).map((call: Json) => ({
      job,
      call,
      label: String(call.arguments?.label ?? call.arguments?.text ?? call.arguments?.query ?? ''),
    })),
  );
}

function describe({ job, call, label }: CallRow, extra: Record<string, unknown> = {}) {
  const outcome = call.outcome ?? {};
  return {
    job: job.id,
    jobStatus: job.status,
    call: call.id,
    tool: call.tool,
    label,
    status: outcome.status ?? call.status,
    executed: outcome.executed,
    attempts: outcome.attempts,
    workerId: outcome.workerId,
    error: typeof outcome.error === 'string' ? outcome.error.slice(0, 160) : undefined,
    ...extra,
  };
}

/** A few examples, from as many different jobs as possible. */
function examples(cases: unknown[]): unknown[] {
  const jobOf = (item: unknown) => (item as { job?: unknown }).job;
  const spread = cases.filter(
    (item, index) => cases.findIndex((other) => jobOf(other) === jobOf(item)) === index,
  );
  return [...new Set([...spread, ...cases])].slice(0, EXAMPLES);
}

function breakdown(cases: unknown[]): Record<string, number> | undefined {
  const counts: Record<string, number> = {};
  for (const item of cases) {
    const { tool, status, executed, jobStatus } = item as Record<string, unknown>;
    if (tool === undefined) return undefined;
    const key = `${tool} ${status}/${executed} in ${jobStatus} job`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function report(broken: unknown[], excused?: unknown[]): Finding {
  const divided = breakdown(broken);
  return {
    broken: broken.length,
    ...(divided && broken.length > 0 ? { breakdown: divided } : {}),
    examples: examples(broken),
    ...(excused ? { excused: { count: excused.length, examples: examples(excused) } } : {}),
  };
}

/** Ledger rows of a label: the notes server writes `start` before it does anything. */
function noteStarts(evidence: Evidence): Map<string, LedgerRecord[]> {
  const starts = new Map<string, LedgerRecord[]>();
  for (const row of evidence.notes) {
    if (row.phase !== 'start') continue;
    const text = String(row.text);
    starts.set(text, [...(starts.get(text) ?? []), row]);
  }
  return starts;
}

function recordsByLabel(rows: RecordedCall[]): Map<string, RecordedCall[]> {
  const byLabel = new Map<string, RecordedCall[]>();
  for (const row of rows) byLabel.set(String(row.label), [...(byLabel.get(String(row.label)) ?? []), row]);
  return byLabel;
}

function owner(evidence: Evidence, pid: unknown): string {
  return evidence.pidOwners.get(Number(pid)) ?? `pid ${pid}`;
}

export function everyJobFinal(evidence: Evidence): Finding {
  const notFinal = evidence.jobs
    .filter((job) => !FINAL.has(job.status))
    .map((job) => ({
      job: job.id,
      status: job.status,
      planned: evidence.planned.get(job.id)?.length,
      recorded: job.toolCalls?.length,
      settled: (job.toolCalls ?? []).filter((call: Json) => call.outcome).length,
      followedToTheEnd: !evidence.open.includes(job.id),
    }));
  return report(notFinal);
}

export function everyJobSucceeds(evidence: Evidence): Finding {
  const failed = evidence.jobs
    // A batch with calls that did not end ok (faults make some indeterminate) still completed.
    .filter((job) => FINAL.has(job.status) && !COMPLETED.has(job.status))
    .map((job) => ({ job: job.id, status: job.status, error: String(job.error ?? '').slice(0, 200) }));
  return report(failed);
}

export function oneOutcomePerCall(evidence: Evidence): Finding {
  const wrong = evidence.jobs
    .filter((job) => FINAL.has(job.status))
    .flatMap((job) => {
      const expected = evidence.planned.get(job.id)?.length ?? 0;
      const recorded: Json[] = job.toolCalls ?? [];
      const distinct = new Set(recorded.map((call) => call.id)).size;
      const withoutOutcome = recorded.filter((call) => !call.outcome).map((call) => call.id);
      if (recorded.length === expected && distinct === expected && withoutOutcome.length === 0) return [];
      return [
        {
          job: job.id,
          expected,
          recorded: recorded.length,
          distinct,
          withoutOutcome: withoutOutcome.slice(0, 5),
        },
      ];
    });
  return report(wrong);
}

export function atMostOnce(evidence: Evidence): Finding {
  const starts = noteStarts(evidence);
  const byLabel = new Map(calls(evidence).map((row) => [row.label, row]));
  const twice = [...starts.entries()]
    .filter(([, rows]) => rows.length > 1)
    .map(([label, rows]) => {
      const row = byLabel.get(label);
      const ledger = {
        starts: rows.length,
        by: rows.map((start) => owner(evidence, start.pid)),
        at: rows.map((start) => start.time),
      };
      return row ? describe(row, ledger) : { label, ...ledger };
    });
  return report(twice);
}

export function executedIsTruthful(evidence: Evidence): Finding {
  const starts = noteStarts(evidence);
  const recorded = new Map([...recordsByLabel(evidence.serial), ...recordsByLabel(evidence.pair)]);
  const lies = calls(evidence).flatMap((row) => {
    const executed = row.call.outcome?.executed;
    if (!executed) return [];
    let runs: number;
    if (row.call.tool === 'notes__add_note') runs = starts.get(row.label)?.length ?? 0;
    else if (String(row.call.tool).endsWith('__record')) runs = recorded.get(row.label)?.length ?? 0;
    else return [];
    if ((executed === 'yes' && runs === 0) || (executed === 'no' && runs > 0))
      return [describe(row, { ledgerRuns: runs })];
    return [];
  });
  return report(lies);
}

export function noUnaskedCancel(evidence: Evidence): Finding {
  // Nobody cancels anything in this suite: every `cancelled` outcome is a lie about who stopped it.
  const cancelled = calls(evidence)
    .filter((row) => row.call.outcome?.status === 'cancelled')
    .map((row) => describe(row));
  return report(cancelled);
}

export function idempotentCallsSucceed(evidence: Evidence): Finding {
  const notOk = calls(evidence)
    .filter(
      (row) => row.call.tool !== 'notes__add_note' && row.call.outcome && row.call.outcome.status !== 'ok',
    )
    .map((row) => describe(row));
  return report(notOk);
}

/** Whether a recorded call ran on a frozen worker's MCP server while that worker was frozen. */
function onFrozenWorker(evidence: Evidence, row: RecordedCall): Freeze | undefined {
  return evidence.freezes.find(
    (frozen) => frozen.serverPids.includes(row.pid) && row.start < frozen.to && row.end > frozen.from,
  );
}

/** Calls that started while `limit` others were already running on the server. */
function overLimit(rows: RecordedCall[], limit: number) {
  const sorted = [...rows].sort((a, b) => a.start - b.start);
  const found: Array<{ call: RecordedCall; running: RecordedCall[] }> = [];
  let active: RecordedCall[] = [];
  for (const row of sorted) {
    active = active.filter((other) => other.end > row.start);
    if (active.length >= limit) found.push({ call: row, running: [...active] });
    active.push(row);
  }
  return found;
}

/**
 * Why a recorded call may have kept running at its server after its worker stopped owning it
 * (docs/semantics.md §1, the stall exception), or undefined when its worker held it throughout:
 * the worker was frozen during it, was killed during it (its stdio server outlived it), or logged that
 * it lost the call's lock after the call started (a worker or Redis stalled past the lock).
 */
function ownershipLost(
  evidence: Evidence,
  row: RecordedCall,
  rows: RecordedCall[],
  bullJobIds: Map<string, string>,
): string | undefined {
  const frozen = onFrozenWorker(evidence, row);
  if (frozen) return `${frozen.workerId} frozen`;
  const worker = owner(evidence, row.pid);
  const killed = evidence.kills.find(
    (kill) => kill.workerId === worker && kill.at >= row.start && kill.at <= row.end,
  );
  if (killed) return `${worker} killed`;
  const bullJobId = bullJobIds.get(String(row.label));
  // The loss must be this run's: logged after it started and before the worker ran the label again.
  const rerun = rows.find(
    (other) =>
      other !== row &&
      other.label === row.label &&
      other.start > row.start &&
      owner(evidence, other.pid) === worker,
  );
  const lost = evidence.lostLocks.find(
    (loss) =>
      loss.workerId === worker &&
      loss.bullJobId === bullJobId &&
      loss.at >= row.start &&
      (!rerun || loss.at < rerun.start),
  );
  return lost ? `${worker} lost the lock` : undefined;
}

export function concurrencyLimit(evidence: Evidence, rows: RecordedCall[], limit: number): Finding {
  const bullJobIds = new Map(
    calls(evidence).map(({ job, call, label }) => [label, toolCallJobId(String(job.id), String(call.id))]),
  );
  const lostBecause = (row: RecordedCall) => ownershipLost(evidence, row, rows, bullJobIds);
  const show = (row: RecordedCall) => ({
    label: row.label,
    worker: owner(evidence, row.pid),
    start: new Date(row.start).toISOString(),
    ms: Math.round(row.end - row.start),
    ownershipLost: lostBecause(row),
  });
  const describeOverlap = ({ call, running }: { call: RecordedCall; running: RecordedCall[] }) => ({
    started: show(call),
    whileRunning: running.slice(0, 3).map(show),
  });
  // An overlap is excused only when, without the calls whose workers no longer owned them, the server
  // was under its limit when the call started.
  const found = overLimit(rows, limit);
  const isExcused = ({ running }: { running: RecordedCall[] }) =>
    running.filter((row) => !lostBecause(row)).length < limit;
  return report(
    found.filter((item) => !isExcused(item)).map(describeOverlap),
    found.filter(isExcused).map(describeOverlap),
  );
}

/** The calls each frozen worker's MCP servers were running while it was frozen, by the ledgers. */
export function inFlightDuringFreezes(evidence: Evidence) {
  return evidence.freezes.map((frozen) => {
    const mine = (pid: unknown) => frozen.serverPids.includes(Number(pid));
    const at = (row: LedgerRecord) => Date.parse(String(row.time));
    const notes = evidence.notes.filter(
      (row) =>
        row.phase === 'start' &&
        mine(row.pid) &&
        at(row) < frozen.to &&
        !evidence.notes.some(
          (done) =>
            done.phase === 'done' &&
            done.text === row.text &&
            done.pid === row.pid &&
            at(done) <= frozen.from,
        ),
    );
    const recorded = [...evidence.serial, ...evidence.pair].filter(
      (row) => mine(row.pid) && row.start < frozen.to && row.end > frozen.from,
    );
    return {
      worker: frozen.workerId,
      pod: frozen.pod,
      ms: frozen.to - frozen.from,
      calls: [...notes.map((row) => String(row.text)), ...recorded.map((row) => String(row.label))],
    };
  });
}

/** A follower of a final job's events must learn its final status (the stream ends with it). */
export function streamsEndWithFinalStatus(evidence: Evidence): Finding {
  return report(
    evidence.streamEnds.filter((end) => end.unreadable === undefined && end.streamEndsWith !== end.status),
  );
}

/** Errors of the outcomes of calls whose queue job Redis lost (docs/semantics.md §18). */
const LOST_QUEUE_JOB = new Set(['redis_data_lost', 'job_missing']);

/**
 * A call ends with its queue job lost only when Redis really lost its data: a crash with AOF, a
 * freeze or a killed process must never cost a queue job. After a loss, such a call must say it may
 * have run (`indeterminate`, executed unknown) — whether it ran is the ledger's to judge (atMostOnce).
 */
export function lostQueueJobsOnlyAfterDataLoss(evidence: Evidence): Finding {
  const lost = calls(evidence).filter((row) => LOST_QUEUE_JOB.has(String(row.call.outcome?.error)));
  const unexcused = evidence.redisDataLosses > 0 ? [] : lost;
  const untruthful = lost.filter(
    (row) =>
      row.call.outcome.executed !== 'unknown' ||
      !['indeterminate', 'cancelled', 'failed'].includes(row.call.outcome.status),
  );
  return report([...unexcused, ...untruthful].map((row) => describe(row)));
}

export function noUnexpectedExit(evidence: Evidence): Finding {
  return report(evidence.exits);
}

/** The promises of issue 8, each checked over the whole run's evidence. */
export const PROMISES: Array<{ name: string; check: (evidence: Evidence) => Finding }> = [
  { name: 'every job reaches a final status by itself', check: everyJobFinal },
  { name: 'every job completes (batches and agent scripts run to their end)', check: everyJobSucceeds },
  { name: 'a final job’s event stream ends with its final status', check: streamsEndWithFinalStatus },
  { name: 'every call of a final job has exactly one outcome', check: oneOutcomePerCall },
  { name: 'no non-idempotent call runs twice (notes ledger)', check: atMostOnce },
  { name: '`executed` agrees with the servers’ ledgers', check: executedIsTruthful },
  { name: 'no `cancelled` outcome in a job nobody cancelled', check: noUnaskedCancel },
  { name: 'idempotent calls end ok (every server came back)', check: idempotentCallsSucceed },
  {
    name: 'rec-serial (concurrency 1) never runs two calls at once',
    check: (evidence) => concurrencyLimit(evidence, evidence.serial, 1),
  },
  {
    name: 'rec-pair (concurrency 2) never runs three calls at once',
    check: (evidence) => concurrencyLimit(evidence, evidence.pair, 2),
  },
  {
    name: 'a call loses its queue job only when Redis lost its data, and then says it may have run',
    check: lostQueueJobsOnlyAfterDataLoss,
  },
  { name: 'no worker or orchestrator exits unless the suite killed it', check: noUnexpectedExit },
];
