import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { PG_POOL, REDIS } from '../runtime/tokens.ts';

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref()),
  ]);

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
  ) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /** Ready for traffic: Redis and PostgreSQL both answer. */
  @Get('ready')
  async ready() {
    const checks = await Promise.allSettled([
      withTimeout(this.redis.ping(), 2_000),
      withTimeout(this.pool.query('SELECT 1'), 2_000),
    ]);
    const [redis, postgres] = checks.map((check) =>
      check.status === 'fulfilled' ? 'ok' : String(check.reason),
    );
    const body = { status: redis === 'ok' && postgres === 'ok' ? 'ok' : 'unavailable', redis, postgres };
    if (body.status !== 'ok') throw new ServiceUnavailableException(body);
    return body;
  }
}
