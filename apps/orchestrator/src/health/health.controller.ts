import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { DependencyHealth } from '../runtime/dependency-health.ts';

@ApiTags('health')
@Controller('health')
@WithoutDependencyTimeout()
export class HealthController {
  constructor(@Inject(DependencyHealth) private readonly dependencies: DependencyHealth) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  /**
   * Ready for traffic: Redis and PostgreSQL both answer within orchestrator.dependencyTimeoutMs.
   * Otherwise 503 naming what is missing (`missing: ["postgres"]`) and why.
   */
  @Get('ready')
  async ready() {
    const report = await this.dependencies.check();
    const missing = (Object.keys(report) as (keyof typeof report)[]).filter((name) => report[name] !== 'ok');
    const body = { status: missing.length === 0 ? 'ok' : 'unavailable', missing, ...report };
    if (missing.length > 0) throw new ServiceUnavailableException(body);
    return body;
  }
}
