import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  parseConfig,
  redisKeys,
  type SessionState,
  type SwitchyardConfig,
  WorkerHeartbeatSchema,
} from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { stringify } from 'yaml';
import { entryPoint, exampleServerPath, RUN_MODE, type RunMode, tsxArgs } from './paths.ts';
import { ProcessGroup, type TestProcess } from './processes.ts';
import { connect, defaultClusterNodes, dropPrefix, REDIS_URL, redisEnv, uniquePrefix } from './redis.ts';

export type ServerEntry = Record<string, unknown>;

/** A stdio entry running one of examples/mcp-servers (from source or compiled: see paths.ts). */
export function exampleServer(name: string, extra: ServerEntry = {}, mode: RunMode = RUN_MODE): ServerEntry {
  return {
    transport: 'stdio',
    command: process.execPath,
    args: tsxArgs(exampleServerPath(name, mode)),
    ...extra,
  };
}

/** Fast failure detection for tests; production defaults are in the config schema. */
export const FAST_WORKER_SETTINGS = {
  heartbeatMs: 500,
  lockDurationMs: 2_000,
  stalledIntervalMs: 1_000,
  shutdownGraceMs: 5_000,
};

/**
 * One isolated Switchyard deployment for a suite: a unique BullMQ prefix, a temp dir for the config and
 * ledgers, worker processes, and a dispatcher. `close()` stops every process and deletes every key.
 */
export class Fleet {
  readonly prefix: string;
  readonly dir: string;
  readonly configPath: string;
  readonly config: SwitchyardConfig;
  readonly group = new ProcessGroup();
  /** Extra environment for every process this deployment starts (e.g. OTEL_* settings). */
  readonly processEnv: Record<string, string> = {};
  /** Whether its apps run from source or compiled (default: SWITCHYARD_COMPILED, see paths.ts). */
  runMode: RunMode = RUN_MODE;
  readonly redis: ReturnType<typeof connect>;
  private dispatcherInstance: ToolCallDispatcher | undefined;
  private otherDispatcherInstance: ToolCallDispatcher | undefined;
  private readonly dispatcherRedis: ReturnType<typeof connect>;
  private readonly catalogReader: CatalogReader;

  constructor(
    label: string,
    servers: (dir: string) => Record<string, ServerEntry>,
    worker: Record<string, unknown> = {},
    /** Further top-level config sections (teams, orchestrator). */
    extra: Record<string, unknown> = {},
    /** The Redis every process of this deployment uses (default: the machine's). */
    readonly redisUrl = REDIS_URL,
    /** Seeds of a Redis Cluster (`host:port,…`) to use instead; default: the suite's, for the default Redis. */
    readonly redisClusterNodes = defaultClusterNodes(redisUrl),
    /** Sentinel seeds (`host:port,…`, group `mymaster`) every process finds the primary through. */
    readonly redisSentinels = '',
  ) {
    this.redis = connect('switchyard-test-fleet', redisUrl, redisClusterNodes, redisSentinels);
    this.dispatcherRedis = connect('switchyard-test-dispatcher', redisUrl, redisClusterNodes, redisSentinels);
    this.prefix = uniquePrefix(label);
    this.catalogReader = new CatalogReader(this.dispatcherRedis, this.prefix, 100);
    this.dir = mkdtempSync(join(tmpdir(), `switchyard-${label}-`));
    const raw = { servers: servers(this.dir), worker: { ...FAST_WORKER_SETTINGS, ...worker }, ...extra };
    this.config = parseConfig(raw);
    this.configPath = join(this.dir, 'switchyard.yaml');
    writeFileSync(this.configPath, stringify(raw));
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /**
   * Starts a worker process and waits until it consumes the queues of `waitFor` (default: all it
   * serves). The wait is for the worker's own log line; the generous limit only bounds a failure,
   * since on a loaded 2-core machine a worker and its stdio servers take tens of seconds to load.
   */
  async startWorker(
    options: {
      servers?: string[];
      waitFor?: string[];
      id?: string;
      timeoutMs?: number;
      /** This worker's Redis, e.g. a proxy in front of the deployment's (default: the deployment's). */
      redisUrl?: string;
      /** Extra environment of this worker only (e.g. fakeTimeEnv). */
      env?: Record<string, string>;
    } = {},
  ): Promise<TestProcess> {
    const id = options.id ?? `w${Math.random().toString(36).slice(2, 8)}`;
    const worker = this.group.start(
      `worker ${id}`,
      tsxArgs(entryPoint('apps/tool-worker', 'main', this.runMode)),
      {
        ...redisEnv(options.redisUrl ?? this.redisUrl, this.redisClusterNodes, this.redisSentinels),
        SWITCHYARD_CONFIG: this.configPath,
        SWITCHYARD_PREFIX: this.prefix,
        WORKER_ID: id,
        WORKER_HTTP_PORT: '0',
        ...(options.servers ? { WORKER_SERVERS: options.servers.join(',') } : {}),
        LOG_LEVEL: 'debug',
        ...this.processEnv,
        ...options.env,
      },
    );
    const waitFor = options.waitFor ?? options.servers ?? Object.keys(this.config.servers);
    await Promise.all(
      waitFor.map((server) =>
        worker.waitFor(
          (log) => log.msg === 'consuming queue' && log.server === server,
          `${id} consuming ${server}`,
          options.timeoutMs ?? 90_000,
        ),
      ),
    );
    // A consumer may start before its server's tool list reaches Redis (in a cluster the catalog and the
    // queue live on different nodes); a call dispatched before that is treated as non-idempotent.
    if (waitFor.length > 0) {
      await this.untilCatalog(
        `catalog entry for ${waitFor.join(', ')}`,
        options.timeoutMs ?? 90_000,
        async () => {
          const entries = await this.redis.hmget(redisKeys.catalog(this.prefix), ...waitFor);
          return entries.every((entry) => entry !== null);
        },
      );
    }
    return worker;
  }

  /**
   * Resolves once a live worker's heartbeat shows `server`'s session in `state`, and drops the
   * dispatcher's catalog cache so its next call sees it too.
   */
  async sessionState(server: string, state: SessionState, timeoutMs = 30_000): Promise<void> {
    await this.untilCatalog(`a heartbeat with ${server} ${state}`, timeoutMs, async () => {
      const beats = Object.values(await this.redis.hgetall(redisKeys.workers(this.prefix)));
      return beats.some(
        (raw) => WorkerHeartbeatSchema.parse(JSON.parse(raw)).sessions[server]?.state === state,
      );
    });
  }

  /**
   * Waits for `seen` to hold, checked now and on every catalog-changed message (workers announce each
   * heartbeat and each tool list there), then drops the dispatcher's catalog cache.
   */
  private async untilCatalog(what: string, timeoutMs: number, seen: () => Promise<boolean>): Promise<void> {
    const subscriber = this.redis.duplicate();
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${what} in ${timeoutMs} ms`)), timeoutMs);
        const check = () =>
          void seen().then((found) => {
            if (found) {
              clearTimeout(timer);
              resolve();
            }
          }, reject);
        subscriber.on('message', check);
        void subscriber.subscribe(redisKeys.catalogChanged(this.prefix)).then(check, reject);
      });
    } finally {
      subscriber.disconnect();
    }
    this.catalogReader.invalidate();
  }

  async dispatcher(): Promise<ToolCallDispatcher> {
    this.dispatcherInstance ??= await this.startDispatcher();
    return this.dispatcherInstance;
  }

  /** A second dispatcher, as another orchestrator replica's: the same queues, its own waits. */
  async otherDispatcher(): Promise<ToolCallDispatcher> {
    this.otherDispatcherInstance ??= await this.startDispatcher();
    return this.otherDispatcherInstance;
  }

  private async startDispatcher(): Promise<ToolCallDispatcher> {
    const dispatcher = new ToolCallDispatcher({
      config: this.config,
      prefix: this.prefix,
      redis: this.dispatcherRedis,
      catalog: this.catalogReader,
      reconcileEveryMs: 2_000,
    });
    await dispatcher.start();
    return dispatcher;
  }

  async close(): Promise<void> {
    await this.dispatcherInstance?.close();
    await this.otherDispatcherInstance?.close();
    await this.group.stopAll();
    // A connection ioredis ended by itself has nothing left to clean through: it was to a test's own
    // Redis (killed for good, or a Sentinel group after its failover), which that test stops. Said, not
    // thrown, so the cleanup of a suite whose assertions passed does not fail it; any other error is.
    if (this.redis.status === 'end') {
      console.warn(`fleet ${this.prefix}: its Redis connection had ended; keys not dropped`);
    } else {
      await dropPrefix(this.redis, this.prefix);
      await this.redis.quit();
    }
    if (this.dispatcherRedis.status !== 'end') await this.dispatcherRedis.quit();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
