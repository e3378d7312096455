import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  chooseBackend,
  closeStore,
  openStore,
  type Store,
  type SwitchyardConfig,
} from '@switchyard/contracts';
import { stopTracing } from '@switchyard/telemetry';
import type pg from 'pg';
import { createPool, migrate } from './database.ts';
import { DependencyHealth } from './dependency-health.ts';
import type { Logger } from './logger.ts';
import type { OrchestratorEnv } from './orchestrator-env.ts';
import { retryWhileDown } from './retry-while-down.ts';
import { CONFIG, ENV, LOGGER, PG_POOL, REDIS, STORE } from './tokens.ts';

/**
 * Process-wide resources: the config, the environment, the logger, the queue store (Redis, or the queue
 * schema on PostgreSQL: one shared command connection or pool) and the job store's PostgreSQL pool.
 * Everything else gets them by injection; they are closed last.
 */
@Global()
@Module({})
export class RuntimeModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(STORE) private readonly store: Store,
    @Inject(ENV) private readonly env: OrchestratorEnv,
    @Inject(LOGGER) private readonly log: Logger,
  ) {}

  static forRoot(config: SwitchyardConfig, env: OrchestratorEnv, log: Logger) {
    return {
      module: RuntimeModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: ENV, useValue: env },
        { provide: LOGGER, useValue: log },
        {
          provide: STORE,
          useFactory: async () => {
            const choice = chooseBackend(process.env, config.backend);
            log.info(
              { backend: choice.backend, reason: choice.reason },
              `backend: ${choice.backend} (${choice.reason})`,
            );
            return openStore({
              choice,
              prefix: env.prefix,
              redis: env.redis,
              databaseUrl: env.databaseUrl,
              connectionName: `switchyard-orchestrator-${env.replicaId}`,
              // Every run's lease confirmations, dispatches and fair-share lines go through it: sized with
              // the runs, so a lock renewal never waits behind them past its lock (docs/operations.md).
              poolMax: 10 + Math.ceil(config.orchestrator.agentRunConcurrency / 4),
              onError: (error, what) => log.warn({ err: error }, what),
            });
          },
        },
        {
          provide: REDIS,
          inject: [STORE],
          useFactory: (store: Store) => (store.kind === 'redis' ? store.redis : null),
        },
        { provide: PG_POOL, useFactory: () => createPool(env.databaseUrl, env.databaseSchema, log) },
        DependencyHealth,
      ],
      exports: [CONFIG, ENV, LOGGER, STORE, REDIS, PG_POOL, DependencyHealth],
    };
  }

  async onModuleInit(): Promise<void> {
    await retryWhileDown('migrating the schema', () => migrate(this.pool, this.env.databaseSchema), this.log);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeStore(this.store);
    await this.pool.end();
    await stopTracing();
  }
}
