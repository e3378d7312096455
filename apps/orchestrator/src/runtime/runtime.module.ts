import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { connectRedis, type RedisConnection, type SwitchyardConfig } from '@switchyard/contracts';
import { stopTracing } from '@switchyard/telemetry';
import type pg from 'pg';
import { createPool, migrate } from './database.ts';
import { DependencyHealth } from './dependency-health.ts';
import type { Logger } from './logger.ts';
import type { OrchestratorEnv } from './orchestrator-env.ts';
import { retryWhileDown } from './retry-while-down.ts';
import { CONFIG, ENV, LOGGER, PG_POOL, REDIS } from './tokens.ts';

/**
 * Process-wide resources: the config, the environment, the logger, one shared Redis command connection
 * and one PostgreSQL pool. Everything else gets them by injection; they are closed last.
 */
@Global()
@Module({})
export class RuntimeModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(REDIS) private readonly redis: RedisConnection,
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
          provide: REDIS,
          useFactory: () => {
            const redis = connectRedis(env.redis, `switchyard-orchestrator-${env.replicaId}`);
            redis.on('error', (error) => log.warn({ err: error }, 'redis connection error'));
            return redis;
          },
        },
        { provide: PG_POOL, useFactory: () => createPool(env.databaseUrl, env.databaseSchema, log) },
        DependencyHealth,
      ],
      exports: [CONFIG, ENV, LOGGER, REDIS, PG_POOL, DependencyHealth],
    };
  }

  async onModuleInit(): Promise<void> {
    await retryWhileDown('migrating the schema', () => migrate(this.pool, this.env.databaseSchema), this.log);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
    await this.pool.end();
    await stopTracing();
  }
}
