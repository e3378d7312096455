import type { Server } from 'node:http';
import {
  ArgumentValidator,
  ClockOffsetGate,
  type ClockOffsetState,
  ConfigError,
  cancelRequests,
  closeStore,
  ServerClock,
  type Store,
  type SwitchyardConfig,
  storeName,
  ToolCallCancelSchema,
  type Unsubscribe,
} from '@switchyard/contracts';
import { CatalogPublisher } from './catalog/catalog-publisher.ts';
import { credentialFetch } from './credentials/credential-fetch.ts';
import { TeamCredentials } from './credentials/team-credentials.ts';
import { TeamSessions } from './credentials/team-sessions.ts';
import { type ReplicaWait, replicaWaitFor } from './execution/replica-wait.ts';
import { ServerConsumer } from './execution/server-consumer.ts';
import { listeningPort, startWorkerHttp } from './observability/worker-http.ts';
import { WorkerMetrics } from './observability/worker-metrics.ts';
import type { Logger } from './runtime/logger.ts';
import { SessionPool } from './sessions/session-pool.ts';

export interface ToolWorkerOptions {
  config: SwitchyardConfig;
  /** The queue store, opened by the caller and closed by stop(). */
  store: Store;
  prefix: string;
  workerId: string;
  /** Servers to serve; all configured ones when undefined. */
  servers: string[] | undefined;
  /** Port of /metrics and /health; undefined: none. */
  httpPort?: number | undefined;
  log: Logger;
}

/** Picks the served servers, naming an unknown one as a config error. */
function selectServers(config: SwitchyardConfig, names: string[] | undefined) {
  if (!names) return config.servers;
  const unknown = names.filter((name) => !(name in config.servers));
  if (unknown.length > 0) {
    throw new ConfigError(
      'WORKER_SERVERS',
      `unknown server(s): ${unknown.join(', ')}; configured: ${Object.keys(config.servers).join(', ')}`,
    );
  }
  return Object.fromEntries(
    names.map((name) => [name, config.servers[name] as SwitchyardConfig['servers'][string]]),
  );
}

/**
 * One tool-worker process: warm sessions, a queue consumer per served server, and the catalog.
 * Start-up opens every session in parallel; shutdown stops taking calls, lets in-flight ones finish
 * within the grace period, then closes sessions (and so their stdio children).
 */
export class ToolWorker {
  readonly pool: SessionPool;
  /** Ends the subscription to cancel requests (its own connection); set by start(). */
  private cancels: Unsubscribe | undefined;
  private readonly consumers: ServerConsumer[];
  /** Stdio servers with per-team secrets: each team's own sessions. */
  private readonly teamSessions = new Map<string, TeamSessions>();
  private readonly publisher: CatalogPublisher;
  private readonly replicaWait: ReplicaWait;
  private readonly metrics: WorkerMetrics;
  /** Deadlines are stamped on the store's clock by the orchestrator and judged here on the same clock. */
  private readonly clock: ServerClock;
  /** BullMQ's PostgreSQL locks are on each host's clock: a host far off takes no call (Redis: none). */
  private readonly clockGate: ClockOffsetGate | undefined;
  private http: Server | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: ToolWorkerOptions) {
    const { config, prefix, workerId, log } = options;
    const servers = selectServers(config, options.servers);
    // Connections per worker process: this shared one, the cancel subscriber (start()), and one
    // blocking connection per served server (each BullMQ Worker's own).
    const credentials = new TeamCredentials(servers, options.store);
    this.pool = new SessionPool(servers, log, (server) =>
      credentials.protects(server) ? credentialFetch(credentials.forSession(server)) : undefined,
    );
    this.metrics = new WorkerMetrics(this.pool);
    for (const [server, session] of this.pool.sessions) {
      const { config: serverConfig } = session;
      if (serverConfig.transport === 'stdio' && serverConfig.auth) {
        this.teamSessions.set(server, new TeamSessions(server, serverConfig, serverConfig.auth, log));
      }
    }
    const validator = new ArgumentValidator();
    this.clockGate = ClockOffsetGate.for(options.store, config.worker.lockDurationMs);
    this.clock = ServerClock.of(options.store, {
      onError: (error) => log.warn({ err: error }, 'could not read the store clock: keeping the last offset'),
      onSample: (sample) => {
        log.debug(sample, 'store clock measured');
        const flipped = this.clockGate?.observe(sample);
        if (flipped) this.onClockVerdict(flipped);
      },
    });
    // Re-read every heartbeat: cheap (one INFO per primary), and a failover changes the answer.
    this.replicaWait = replicaWaitFor(
      options.store,
      config.worker.replicaWait,
      config.worker.lockDurationMs,
      config.worker.heartbeatMs,
      log,
    );
    this.consumers = [...this.pool.sessions].map(
      ([server, session]) =>
        new ServerConsumer({
          server,
          config: session.config,
          session,
          settings: config.worker,
          retention: config.toolCalls,
          prefix,
          store: options.store,
          validator,
          credentials,
          teamSessions: this.teamSessions.get(server),
          workerId,
          log,
          onOutcome: (outcome) => this.metrics.record(outcome),
          clock: this.clock,
          replicaWait: this.replicaWait,
        }),
    );
    this.publisher = new CatalogPublisher({
      pool: this.pool,
      store: options.store,
      workerId,
      heartbeatMs: config.worker.heartbeatMs,
      // Read on every beat: the port is known only once the HTTP server listens.
      httpPort: () => (this.http ? listeningPort(this.http) : undefined),
      log,
    });
  }

  async start(): Promise<void> {
    const { log, workerId } = this.options;
    if (this.options.httpPort !== undefined) {
      this.http = await startWorkerHttp(this.options.httpPort, {
        pool: this.pool,
        metrics: this.metrics,
        log,
        clockRefusal: () => this.clockRefusal(),
      });
    }
    this.publisher.start();
    this.replicaWait.start();
    this.cancels = await cancelRequests(this.options.store).subscribe((message) => this.onCancel(message), {
      connectionName: `switchyard-worker-${workerId}-cancels`,
      onError: (error) => log.warn({ err: error }, 'cancel subscriber error'),
    });
    // Before the first call is taken: a call's deadline is judged on this clock.
    const clockSample = await this.clock.sync();
    log.info(
      { ...clockSample, store: this.options.store.kind },
      `clock synced to ${storeName(this.options.store)}`,
    );
    this.clock.start();
    await Promise.all(this.consumers.map((consumer) => consumer.start()));
    for (const consumer of this.consumers) consumer.watchRedis();
    await this.pool.open();
    log.info({ workerId, sessions: this.pool.statuses() }, 'tool worker started');
  }

  /** Why /health/ready must say not ready because of the clock; undefined when it need not. */
  private clockRefusal(): (ClockOffsetState & { status: string }) | undefined {
    const state = this.clockGate?.current;
    if (!state?.refusing) return undefined;
    return { ...state, status: `clock too far from ${storeName(this.options.store)}` };
  }

  /** The offset crossed the gate's bound (either way): every consumer pauses or resumes. */
  private onClockVerdict(state: ClockOffsetState): void {
    const { log, store } = this.options;
    const fields = { offsetMs: state.offsetMs, rttMs: state.rttMs, limitMs: state.limitMs };
    if (state.refusing) {
      log.error(fields, `clock too far from ${storeName(store)}: taking no calls, running no stalled checks`);
    } else {
      log.info(fields, `clock back within bounds of ${storeName(store)}: taking calls again`);
    }
    for (const consumer of this.consumers) {
      consumer
        .refuseForClock(state.refusing)
        .catch((error: unknown) => log.error({ err: error }, 'could not follow the clock verdict'));
    }
  }

  private onCancel(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      parsed = undefined;
    }
    const request = ToolCallCancelSchema.safeParse(parsed);
    if (!request.success) {
      this.options.log.warn({ message: message.slice(0, 200) }, 'ignored a malformed cancel request');
      return;
    }
    const { queue, id, ids = [], reason } = request.data;
    const consumer = this.consumers.find((candidate) => candidate.queueName === queue);
    for (const call of id === undefined ? ids : [id, ...ids]) consumer?.cancel(call, reason);
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const { log, config } = this.options;
    log.info({ graceMs: config.worker.shutdownGraceMs }, 'tool worker stopping');
    await Promise.all(this.consumers.map((consumer) => consumer.close(config.worker.shutdownGraceMs)));
    await Promise.all([...this.teamSessions.values()].map((sessions) => sessions.close()));
    await this.pool.close();
    await this.publisher.stop();
    this.replicaWait.stop();
    this.clock.stop();
    await this.cancels?.();
    await closeStore(this.options.store);
    await new Promise((resolve) => (this.http ? this.http.close(resolve) : resolve(undefined)));
    log.info('tool worker stopped');
  }
}
