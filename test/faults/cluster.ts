import type { ApiClient } from '../support/api-client.ts';
import { Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import type { DedicatedPostgres } from '../support/postgres-server.ts';
import { descendants, type TestProcess } from '../support/processes.ts';
import type { DedicatedRedis } from '../support/redis-server.ts';
import type { LockLoss } from './promises.ts';

export const TEAM_KEY = 'alpha-key-0000000000000001';

/** What a worker logs when it learns a job's lock is no longer its own (apps/tool-worker execution/). */
const LOCK_LOST_MESSAGES = new Set([
  'lock lost: aborting the call',
  'job no longer ours: no outcome recorded',
]);

/** Short locks, so a worker frozen for a few seconds has lost its jobs by the time it wakes. */
export const WORKER_SETTINGS = { lockDurationMs: 2_000, stalledIntervalMs: 1_000 };

export interface WorkerHandle {
  id: string;
  process: TestProcess;
}

export interface UnexpectedExit {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  lastLogs: string[];
  /** The first line of stderr that names an error (an uncaught exception's message). */
  stderrError: string | undefined;
}

/** The line of a crash's stderr that names the error: `Error: ...` first, else any line mentioning one. */
function errorLine(stderr: string): string | undefined {
  const lines = stderr.split('\n');
  const line =
    lines.find((text) => /^\s*(\w*Error|error): /.test(text)) ?? lines.find((text) => /error/i.test(text));
  return line?.trim().slice(0, 300);
}

const isRunning = (proc: TestProcess) => proc.child.exitCode === null && proc.child.signalCode === null;

/**
 * The fault suite's deployment on its own Redis and PostgreSQL (on the postgres backend, its own
 * PostgreSQL alone, which then holds the queues as well as the jobs): three workers, two orchestrator
 * replicas, and the servers whose ledgers prove what ran. Knows which processes the suite itself
 * killed, so any other exit is reported as unexpected.
 */
export class FaultCluster {
  readonly deployment: Deployment;
  readonly workers: WorkerHandle[] = [];
  readonly orchestrators: Orchestrator[] = [];
  /** Processes the suite killed on purpose. */
  readonly killed = new Set<TestProcess>();
  /** Which worker (id) an MCP server process (pid) belonged to, as last seen in the process table. */
  readonly pidOwners = new Map<number, string>();

  constructor(
    /** The queues' Redis; undefined on the postgres backend, where the queues live in `postgres`. */
    readonly redis: DedicatedRedis | undefined,
    readonly postgres: DedicatedPostgres,
  ) {
    const fast = {
      reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
      health: { pingIntervalMs: 500, pingTimeoutMs: 1_000, failureThreshold: 2 },
      queueTimeoutMs: 300_000,
      retry: { attempts: 6, backoffMs: 100 },
    };
    this.deployment = new Deployment(
      'faults',
      (dir) => ({
        'rec-serial': exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/serial.jsonl` },
          idempotent: ['record'],
          ...fast,
        }),
        'rec-pair': exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/pair.jsonl` },
          idempotent: ['record'],
          concurrency: 2,
          ...fast,
        }),
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, ...fast }),
        search: exampleServer('search', { trusted: true, ...fast }),
      }),
      {
        ...(redis ? { redisUrl: redis.url } : {}),
        databaseUrl: postgres.url,
        teams: { alpha: { apiKeys: [TEAM_KEY], maxConcurrentJobs: 500 } },
        // On postgres, run locks of 5 s rather than the harness's 2 s. A replacement that takes over
        // ~40 runs at once on two contended cores lags its event loop past a 2 s lock: each renewal comes
        // late, its own stalled check hands the runs back, and they reach maxStalledCount (seed
        // 4073823818 failed 4–6 runs that way). Redis's claims and renewals cost the process far less CPU
        // and keep 2 s. That lag is a limit of the postgres backend, written up in docs/postgres-backend.md.
        orchestrator: {
          agentRunConcurrency: 100,
          ...(redis ? {} : { lockDurationMs: 5_000, stalledIntervalMs: 2_500 }),
        },
        worker: WORKER_SETTINGS,
      },
    );
  }

  /**
   * Workers first, one at a time, then replicas: started all at once on a loaded 2-core machine, some
   * never got going (twelve MCP server processes loading at once outlasted the 30 s handshake, again
   * and again).
   */
  async start(): Promise<void> {
    for (const id of ['w1', 'w2', 'w3']) await this.startWorker(id);
    await Promise.all(['o1', 'o2'].map((id) => this.startOrchestrator(id)));
  }

  /** The queues' Redis, for a Redis fault; on the postgres backend such a fault is a mistake of the schedule. */
  queueRedis(): DedicatedRedis {
    if (!this.redis) throw new Error('a Redis fault on the postgres backend: the queues have no Redis');
    return this.redis;
  }

  async startWorker(id: string): Promise<WorkerHandle> {
    const worker = { id, process: await this.deployment.startWorker({ id }) };
    this.workers.push(worker);
    this.notePidOwners();
    return worker;
  }

  async startOrchestrator(id: string): Promise<Orchestrator> {
    const orchestrator = await this.deployment.startOrchestrator(id);
    this.orchestrators.push(orchestrator);
    return orchestrator;
  }

  liveWorkers(): WorkerHandle[] {
    return this.workers.filter((worker) => isRunning(worker.process));
  }

  liveOrchestrators(): Orchestrator[] {
    return this.orchestrators.filter((orchestrator) => isRunning(orchestrator.process));
  }

  /** Resolves once every orchestrator replica has exited (replacements included): nothing can progress. */
  async noOrchestratorLeft(): Promise<void> {
    for (let live = this.liveOrchestrators(); live.length > 0; live = this.liveOrchestrators())
      await Promise.all(live.map((orchestrator) => orchestrator.process.exited));
  }

  /** A client of the newest live replica, or undefined when none is left. */
  api(): ApiClient | undefined {
    return this.liveOrchestrators().at(-1)?.api('alpha');
  }

  /** Remembers which worker owns each MCP server process now alive, to attribute ledger rows later. */
  notePidOwners(): void {
    for (const worker of this.liveWorkers()) {
      for (const pid of descendants(worker.process.pid)) this.pidOwners.set(pid, worker.id);
    }
  }

  /** Every lock loss a worker logged (docs/semantics.md §4), with the worker and the queue job. */
  lostLocks(): LockLoss[] {
    return this.workers.flatMap((worker) =>
      worker.process.logs
        .filter((log) => LOCK_LOST_MESSAGES.has(String(log.msg)) && typeof log.bull_job_id === 'string')
        .map((log) => ({
          workerId: worker.id,
          bullJobId: String(log.bull_job_id),
          at: Date.parse(String(log.time)),
        })),
    );
  }

  /** Workers and orchestrators that exited although the suite never killed them. */
  unexpectedExits(): UnexpectedExit[] {
    return this.deployment.group.processes
      .filter((proc) => !isRunning(proc) && !this.killed.has(proc))
      .map((proc) => ({
        name: proc.name,
        code: proc.child.exitCode,
        signal: proc.child.signalCode,
        lastLogs: proc.logs
          .slice(-3)
          .map((log) => `${log.level} ${log.msg} ${JSON.stringify(log.err ?? '')}`),
        stderrError: errorLine(proc.stderr.join('')),
      }));
  }

  async close(): Promise<void> {
    await this.deployment.close();
  }
}
