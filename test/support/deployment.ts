import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ApiClient, type Json } from './api-client.ts';
import { DATABASE_URL } from './backend.ts';
import { Fleet, type ServerEntry } from './fleet.ts';
import type { TestProcess } from './processes.ts';

export { DATABASE_URL };

export const TEAM_KEYS = {
  alpha: 'alpha-key-0000000000000001',
  beta: 'beta-key-00000000000000002',
  searchers: 'searchers-key-000000000003',
  /** Not a team: `operators.apiKeys`, the full fleet view on /v1/servers and /v1/tools. */
  operator: 'operator-key-0000000000004',
};

export interface Orchestrator {
  process: TestProcess;
  url: string;
  api: (team?: keyof typeof TEAM_KEYS) => ApiClient;
}

/** Fast failover for tests: a replica that dies loses its runs within seconds. */
export const FAST_ORCHESTRATOR_SETTINGS = { lockDurationMs: 2_000, stalledIntervalMs: 1_000 };

/**
 * A whole isolated Switchyard: the Fleet (prefix, workers, MCP servers) plus orchestrator replicas on a
 * fresh PostgreSQL schema. `close()` stops every process and drops the schema and the Redis keys (on the
 * postgres pass: the queue schema, in the same database).
 */
export class Deployment extends Fleet {
  readonly schema = `sy_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  private readonly orchestrators: Orchestrator[] = [];
  /** The PostgreSQL every replica uses (default: the machine's). */
  readonly databaseUrl: string;

  constructor(
    label: string,
    servers: (dir: string) => Record<string, ServerEntry>,
    options: {
      teams?: Record<string, unknown>;
      orchestrator?: Record<string, unknown>;
      worker?: Record<string, number>;
      redisUrl?: string;
      databaseUrl?: string;
    } = {},
  ) {
    super(
      label,
      servers,
      options.worker ?? {},
      {
        teams: options.teams ?? {
          alpha: { apiKeys: [TEAM_KEYS.alpha], maxConcurrentJobs: 50 },
          beta: { apiKeys: [TEAM_KEYS.beta] },
          searchers: { apiKeys: [TEAM_KEYS.searchers], tools: { allow: ['search__*'] } },
        },
        orchestrator: { ...FAST_ORCHESTRATOR_SETTINGS, ...options.orchestrator },
        operators: { apiKeys: [TEAM_KEYS.operator] },
      },
      options.redisUrl,
    );
    this.databaseUrl = options.databaseUrl ?? DATABASE_URL;
  }

  /** Starts a replica and waits for its "listening" line; `timeoutMs` only bounds a failure (slow on a loaded machine). */
  async startOrchestrator(
    id = `o${Math.random().toString(36).slice(2, 8)}`,
    timeoutMs = 90_000,
  ): Promise<Orchestrator> {
    const process = this.group.start(`orchestrator ${id}`, this.appArgs('apps/orchestrator'), {
      ...this.orchestratorEnv(this.configPath),
      REPLICA_ID: id,
      LOG_LEVEL: 'debug',
      ...this.processEnv,
    });
    const listening = await process.waitFor(
      (log) => log.msg === 'orchestrator listening',
      `${id} to listen`,
      timeoutMs,
    );
    const url = `http://127.0.0.1:${listening.port}`;
    const orchestrator = {
      process,
      url,
      api: (team?: keyof typeof TEAM_KEYS) => new ApiClient(url, team ? TEAM_KEYS[team] : undefined),
    };
    this.orchestrators.push(orchestrator);
    return orchestrator;
  }

  /**
   * Starts an orchestrator on another config file (a bad one, to see it refused) without waiting for it
   * to listen; wait on the process's `exited`. It stops with the deployment's other processes.
   */
  startOrchestratorOn(configPath: string, name: string): TestProcess {
    return this.group.start(name, this.appArgs('apps/orchestrator'), this.orchestratorEnv(configPath));
  }

  /** What every orchestrator of this deployment is started with: its stores, prefix and schema. */
  private orchestratorEnv(configPath: string): NodeJS.ProcessEnv {
    return {
      ...this.queueStoreEnv(),
      DATABASE_URL: this.databaseUrl,
      DATABASE_SCHEMA: this.schema,
      SWITCHYARD_CONFIG: configPath,
      SWITCHYARD_PREFIX: this.prefix,
      PORT: '0',
      HOST: '127.0.0.1',
    };
  }

  /** On the postgres pass the queues live next to the job store: every process uses one database. */
  protected override queueDatabaseUrl(): string {
    return this.databaseUrl;
  }

  /** A client of the first orchestrator started, with `team`'s key. */
  api(team?: keyof typeof TEAM_KEYS): ApiClient {
    const first = this.orchestrators[0];
    if (!first) throw new Error('no orchestrator started');
    return first.api(team);
  }

  override async close(): Promise<void> {
    await super.close();
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
    } finally {
      await client.end();
    }
  }
}

/**
 * Submits a job through the first of `replicas` (team alpha) and finds out which replica took its run
 * (its `running` event names it): that one is `doomed` by a failover test, the other is the `survivor`.
 */
export async function submitAndFindRunner(
  replicas: Orchestrator[],
  body: unknown,
): Promise<{ id: string; doomed: Orchestrator; survivor: Orchestrator }> {
  const api = replicas[0]?.api('alpha');
  if (!api) throw new Error('no replica');
  const submitted = await api.submit(body);
  if (submitted.status !== 201) {
    throw new Error(`submitting the job failed: HTTP ${submitted.status} ${JSON.stringify(submitted.body)}`);
  }
  const id: string = submitted.body.id;
  const running: Json = (
    await api.events(id, (event) => event.event === 'status' && event.data.status === 'running')
  ).at(-1);
  const doomed = replicas.find((replica) => replica.process.name === `orchestrator ${running.data.replica}`);
  const survivor = replicas.find((replica) => replica !== doomed);
  if (!doomed || !survivor) throw new Error(`no replica named ${running.data.replica}`);
  return { id, doomed, survivor };
}
