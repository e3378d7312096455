import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CatalogStore,
  closeStore,
  openStore,
  PROCESS_NODE_FLAGS,
  parseConfig,
  type RedisConnection,
  redisStore,
  type SessionState,
  type Store,
  type SwitchyardConfig,
} from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { stringify } from 'yaml';
import { catalogOf, forgetQueueStore, registerQueueStore, untilAnnounced } from './announcements.ts';
import { absentRedis, DATABASE_URL, postgresBackendEnv, TEST_BACKEND } from './backend.ts';
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

/** Whether `catalog` lists the tools of every one of `servers` (lapsed heartbeats' too). */
export async function listsAll(catalog: CatalogStore, servers: string[]): Promise<boolean> {
  const listed = new Set((await catalog.read(0)).servers.map((entry) => entry.server));
  return servers.every((server) => listed.has(server));
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
 * On the postgres pass (SWITCHYARD_TEST_BACKEND=postgres, support/backend.ts) its processes, its
 * dispatchers and its own waits use the queue schema of the prefix in DATABASE_URL, and no Redis at
 * all; `close()` drops that schema.
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
  /** Node flags of its orchestrators and workers: the ones every Switchyard process runs with (process-flags.ts). */
  nodeFlags: readonly string[] = PROCESS_NODE_FLAGS;
  /** The suite's own Redis connection; on the postgres pass a stand-in that fails on first use. */
  readonly redis: RedisConnection;
  private dispatcherInstance: ToolCallDispatcher | undefined;
  private otherDispatcherInstance: ToolCallDispatcher | undefined;
  /** The dispatchers' Redis connection (redis pass only). */
  private readonly dispatcherRedis: RedisConnection | undefined;
  /** Shared by both dispatchers; made with the first, from the store they use. */
  protected catalogReader: CatalogReader | undefined;
  /** Postgres pass: the queue store of the dispatchers and of this fleet's waits, opened when first needed. */
  private postgresStore: Promise<Store> | undefined;

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
    this.prefix = uniquePrefix(label);
    if (TEST_BACKEND === 'postgres') {
      this.redis = absentRedis(`fleet ${this.prefix}`);
      registerQueueStore(this.prefix, () => this.queueStore());
    } else {
      this.redis = connect('switchyard-test-fleet', redisUrl, redisClusterNodes, redisSentinels);
      this.dispatcherRedis = connect(
        'switchyard-test-dispatcher',
        redisUrl,
        redisClusterNodes,
        redisSentinels,
      );
    }
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
   * Whether this deployment's processes, dispatchers and catalog waits use its queue schema in PostgreSQL:
   * on the postgres pass (the bench's onPostgres fleets: always). Its own Redis connections are opened,
   * or not, by the pass alone.
   */
  protected queuesOnPostgres(): boolean {
    return TEST_BACKEND === 'postgres';
  }

  /** The PostgreSQL that holds this deployment's queues on the postgres pass (Deployment: its database). */
  protected queueDatabaseUrl(): string {
    return DATABASE_URL;
  }

  /** The name of this process's connections to the queue schema. */
  protected queueStoreConnectionName(): string {
    return 'switchyard-test-fleet';
  }

  /** What points an app process at this deployment's queues: `redisUrl` (and the fleet's cluster, sentinels), or PostgreSQL. */
  protected queueStoreEnv(redisUrl = this.redisUrl): Record<string, string | undefined> {
    if (this.queuesOnPostgres()) return postgresBackendEnv(this.queueDatabaseUrl());
    return redisEnv(redisUrl, this.redisClusterNodes, this.redisSentinels);
  }

  /** Postgres pass: the store of the prefix's queue schema, as the apps open it (the schema made if new). */
  protected queueStore(): Promise<Store> {
    this.postgresStore ??= openStore({
      choice: { backend: 'postgres', reason: 'test' },
      prefix: this.prefix,
      redis: { url: '' },
      databaseUrl: this.queueDatabaseUrl(),
      connectionName: this.queueStoreConnectionName(),
    });
    return this.postgresStore;
  }

  /**
   * The store of this deployment's queues, for a suite's own reads and writes (BullMQ's Queue through
   * `bullmqBinding`, the ports): the suite's Redis connection, or on postgres the queue schema's store,
   * which `close()` closes.
   */
  async suiteStore(): Promise<Store> {
    return this.queuesOnPostgres() ? this.queueStore() : redisStore(this.redis, this.prefix);
  }

  /** The store the dispatchers use: their own Redis connection, or the queue store on postgres. */
  private async dispatcherStore(): Promise<Store> {
    if (this.queuesOnPostgres() || !this.dispatcherRedis) return this.queueStore();
    return redisStore(this.dispatcherRedis, this.prefix);
  }

  /** Node arguments that start one of the apps (`apps/orchestrator`, `apps/tool-worker`) as this fleet runs them. */
  protected appArgs(app: 'apps/orchestrator' | 'apps/tool-worker'): string[] {
    return [...this.nodeFlags, ...tsxArgs(entryPoint(app, 'main', this.runMode))];
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
    const worker = this.group.start(`worker ${id}`, this.appArgs('apps/tool-worker'), {
      ...this.queueStoreEnv(options.redisUrl ?? this.redisUrl),
      SWITCHYARD_CONFIG: this.configPath,
      SWITCHYARD_PREFIX: this.prefix,
      WORKER_ID: id,
      WORKER_HTTP_PORT: '0',
      ...(options.servers ? { WORKER_SERVERS: options.servers.join(',') } : {}),
      LOG_LEVEL: 'debug',
      ...this.processEnv,
      ...options.env,
    });
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
    // A consumer may start before its server's tool list reaches the store (in a cluster the catalog and
    // the queue live on different nodes); a call dispatched before that is treated as non-idempotent.
    if (waitFor.length > 0) await this.untilListed(waitFor, options.timeoutMs ?? 90_000);
    return worker;
  }

  /** Resolves once the catalog lists the tools of every one of `servers`, then drops the dispatcher's catalog cache. */
  protected async untilListed(servers: string[], timeoutMs: number): Promise<void> {
    const catalog = await catalogOf(this.redis, this.prefix);
    await this.untilCatalog(`catalog entry for ${servers.join(', ')}`, timeoutMs, () =>
      listsAll(catalog, servers),
    );
  }

  /**
   * Resolves once a live worker's heartbeat shows `server`'s session in `state`, and drops the
   * dispatcher's catalog cache so its next call sees it too.
   */
  async sessionState(server: string, state: SessionState, timeoutMs = 30_000): Promise<void> {
    const catalog = await catalogOf(this.redis, this.prefix);
    await this.untilCatalog(`a heartbeat with ${server} ${state}`, timeoutMs, async () => {
      // Lapsed heartbeats count too (read(0) forgets none), as they did when this read the hash itself.
      const { workers } = await catalog.read(0);
      return workers.some((beat) => beat.sessions[server]?.state === state);
    });
  }

  /**
   * Waits for `seen` to hold, checked now and on every catalog-changed message (workers announce each
   * heartbeat and each tool list there), then drops the dispatcher's catalog cache.
   */
  private async untilCatalog(what: string, timeoutMs: number, seen: () => Promise<boolean>): Promise<void> {
    await untilAnnounced(this.redis, this.prefix, seen, what, timeoutMs);
    this.catalogReader?.invalidate();
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
    const store = await this.dispatcherStore();
    this.catalogReader ??= new CatalogReader(store, 100);
    const dispatcher = new ToolCallDispatcher({
      config: this.config,
      prefix: this.prefix,
      store,
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
    if (TEST_BACKEND === 'postgres') await this.dropQueueSchema();
    else await this.dropRedisKeys();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Postgres pass: the queue schema goes, with BullMQ's tables and the queue-side ones in it. */
  protected async dropQueueSchema(): Promise<void> {
    forgetQueueStore(this.prefix);
    const store = await this.queueStore();
    try {
      if (store.kind === 'postgres') await store.pool.query(`DROP SCHEMA IF EXISTS ${store.schema} CASCADE`);
    } finally {
      await closeStore(store);
    }
  }

  private async dropRedisKeys(): Promise<void> {
    // A connection ioredis ended by itself has nothing left to clean through: it was to a test's own
    // Redis (killed for good, or a Sentinel group after its failover), which that test stops. Said, not
    // thrown, so the cleanup of a suite whose assertions passed does not fail it; any other error is.
    if (this.redis.status === 'end') {
      console.warn(`fleet ${this.prefix}: its Redis connection had ended; keys not dropped`);
    } else {
      await dropPrefix(this.redis, this.prefix);
      await this.redis.quit();
    }
    if (this.dispatcherRedis && this.dispatcherRedis.status !== 'end') await this.dispatcherRedis.quit();
  }
}
