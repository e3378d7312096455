import { catalogStoreOf } from '@switchyard/contracts';
import { descendants, freeze, isAlive, killAll } from '../support/processes.ts';
import type { SeededRandom } from '../support/random.ts';
import { type FaultCluster, WORKER_SETTINGS } from './cluster.ts';

export const FAULT_KINDS = [
  'worker-kill',
  'mcp-server-kill',
  'orchestrator-kill',
  'redis-crash',
  'redis-restart-empty',
  'worker-freeze',
  'redis-freeze',
  'pg-terminate',
  'pg-restart',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults of the Redis the queues live in: on the postgres backend there is none, so they are not scheduled. */
export const REDIS_FAULT_KINDS: readonly FaultKind[] = ['redis-crash', 'redis-restart-empty', 'redis-freeze'];

/** A worker SIGSTOPped from `from` to `to` (epoch ms); `serverPids` are its MCP server processes. */
export interface Freeze {
  workerId: string;
  /** Whether its MCP servers were frozen too (a frozen pod), or only the worker (a GC pause). */
  pod: boolean;
  serverPids: number[];
  from: number;
  to: number;
}

/** A worker the suite SIGKILLed at `at` (epoch ms). */
export interface Kill {
  workerId: string;
  at: number;
}

export interface FaultRecord {
  kind: FaultKind;
  at: string;
  /** How long injecting it took (a freeze lasts its duration; a replacement starts in the background). */
  ms: number;
  /** Jobs not yet final when the fault began: a fault on an idle system proves little. */
  openJobs: number;
  detail: Record<string, unknown>;
}

/**
 * Injects one fault at a time into a FaultCluster. Every random choice (victim, duration, pause)
 * comes from the suite's seeded PRNG. Killed processes get a replacement (that is the orchestration
 * platform's job, not a manual restart); processes that died by themselves do not.
 */
export class Chaos {
  readonly freezes: Freeze[] = [];
  readonly kills: Kill[] = [];
  readonly records: FaultRecord[] = [];
  private replacements = 0;
  /** Replacements of killed processes still starting: the schedule goes on meanwhile, as in production. */
  private readonly starting: Promise<unknown>[] = [];

  constructor(
    private readonly cluster: FaultCluster,
    private readonly random: SeededRandom,
    private readonly openJobs: () => number,
  ) {}

  async inject(kind: FaultKind): Promise<void> {
    const began = Date.now();
    const record: FaultRecord = {
      kind,
      at: new Date(began).toISOString(),
      ms: 0,
      openJobs: this.openJobs(),
      detail: {},
    };
    this.records.push(record);
    this.cluster.notePidOwners();
    try {
      record.detail = await this.run(kind);
    } catch (error) {
      record.detail = { error: (error as Error).message };
    }
    record.ms = Date.now() - began;
    this.cluster.notePidOwners();
  }

  /** Waits for every replacement to be up; one that failed to start is reported on its fault. */
  async replacementsStarted(): Promise<void> {
    await Promise.all(this.starting);
  }

  private replace(record: Record<string, unknown>, start: () => Promise<unknown>): void {
    this.starting.push(
      start().catch((error: unknown) => {
        // The end of the message holds the replacement's last log lines: what it was waiting on.
        record.error = `replacement did not start: ${(error as Error).message.slice(-2_000)}`;
      }),
    );
  }

  private run(kind: FaultKind): Promise<Record<string, unknown>> {
    switch (kind) {
      case 'worker-kill':
        return this.killWorker();
      case 'mcp-server-kill':
        return this.killMcpServer();
      case 'orchestrator-kill':
        return this.killOrchestrator();
      case 'redis-crash':
        return this.crashRedis();
      case 'redis-restart-empty':
        return this.restartRedisEmpty();
      case 'worker-freeze':
        return this.freezeWorker();
      case 'redis-freeze':
        return this.freezeRedis();
      case 'pg-terminate':
        return this.terminateBackends();
      case 'pg-restart':
        return this.restartPostgres();
    }
  }

  private async killWorker() {
    const live = this.cluster.liveWorkers();
    if (live.length === 0) return { skipped: 'no live worker' };
    const victim = this.random.pick(live);
    this.cluster.killed.add(victim.process);
    this.kills.push({ workerId: victim.id, at: Date.now() });
    this.cluster.deployment.group.adopt(await victim.process.crash());
    const detail = { victim: victim.id, replacement: `w-replacement-${++this.replacements}` };
    this.replace(detail, () => this.cluster.startWorker(detail.replacement));
    return detail;
  }

  private async killMcpServer() {
    // Through the catalog port, from Redis or the queue schema; read(0) forgets no heartbeat.
    const catalog = catalogStoreOf(await this.cluster.deployment.suiteStore());
    const beats = (await catalog.read(0)).workers;
    const sessions = beats.flatMap((beat) =>
      Object.entries(beat.sessions).flatMap(([server, session]) =>
        // A killed worker's last heartbeat outlives it: only processes still running are victims.
        session.pid && isAlive(session.pid) ? [{ server, pid: session.pid, workerId: beat.workerId }] : [],
      ),
    );
    if (sessions.length === 0) return { skipped: 'no MCP server process in the heartbeats' };
    const victim = this.random.pick(sessions);
    killAll([victim.pid]);
    return victim;
  }

  private async killOrchestrator() {
    const live = this.cluster.liveOrchestrators();
    if (live.length === 0) return { skipped: 'no live orchestrator' };
    const victim = this.random.pick(live);
    this.cluster.killed.add(victim.process);
    await victim.process.crash();
    const detail = { victim: victim.process.name, replacement: `o-replacement-${++this.replacements}` };
    this.replace(detail, () => this.cluster.startOrchestrator(detail.replacement));
    return detail;
  }

  private async crashRedis() {
    const redis = this.cluster.queueRedis();
    await redis.crashAndRestart();
    return { restarts: redis.restarts };
  }

  /**
   * SIGKILL and back on the same port without its data (its AOF deleted): a Redis without persistence
   * that restarted. Queues, runs and the catalog are gone; PostgreSQL must rebuild them (semantics §18).
   */
  private async restartRedisEmpty() {
    const redis = this.cluster.queueRedis();
    await redis.restartEmpty();
    return { restarts: redis.restarts, empty: true };
  }

  /** Frozen past its lock and the stalled check, so BullMQ hands its jobs to another worker. */
  private async freezeWorker() {
    const live = this.cluster.liveWorkers();
    if (live.length === 0) return { skipped: 'no live worker' };
    // Prefer the worker that sent the latest write: it is the likeliest to hold a call mid-flight.
    const writer = this.latestWriter(live.map((worker) => worker.id));
    const victim = writer && this.random.next() < 0.5 ? writer : this.random.pick(live);
    const pod = this.random.next() < 0.5;
    const serverPids = descendants(victim.process.pid);
    const ms =
      WORKER_SETTINGS.lockDurationMs + WORKER_SETTINGS.stalledIntervalMs + this.random.int(500, 3_000);
    const frozen: Freeze = { workerId: victim.id, pod, serverPids, from: Date.now(), to: 0 };
    this.freezes.push(frozen);
    try {
      await freeze(pod ? [victim.process.pid, ...serverPids] : [victim.process.pid], ms);
    } finally {
      frozen.to = Date.now();
    }
    return { victim: victim.id, pod, ms, preferredWriter: writer?.id };
  }

  private latestWriter(ids: string[]) {
    let latest: { at: number; id: string } | undefined;
    for (const worker of this.cluster.liveWorkers()) {
      if (!ids.includes(worker.id)) continue;
      const sent = worker.process.logs.findLast(
        (log) => log.msg === 'tool call sent' && log.server === 'notes',
      );
      const at = Date.parse(String(sent?.time ?? 0));
      if (sent && (!latest || at > latest.at)) latest = { at, id: worker.id };
    }
    return this.cluster.workers.find((worker) => worker.id === latest?.id);
  }

  private async freezeRedis() {
    const pid = this.cluster.queueRedis().pid;
    if (!pid) return { skipped: 'Redis not running' };
    const ms = this.random.int(2_000, 6_000);
    await freeze([pid], ms);
    return { ms };
  }

  private async terminateBackends() {
    return { terminated: await this.cluster.postgres.terminateBackends() };
  }

  private async restartPostgres() {
    const downMs = this.random.int(0, 3_000);
    await this.cluster.postgres.restart(downMs);
    return { downMs };
  }
}
