import { Controller, Get, Inject } from '@nestjs/common';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { ProblemException } from '../http/problem.ts';
import { DependencyHealth } from '../runtime/dependency-health.ts';

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
   * Ready for traffic: every dependency of the backend (PostgreSQL, and Redis on the redis backend)
   * answers within orchestrator.dependencyTimeoutMs. Otherwise a 503 problem naming what is missing
   * (`missing: ["postgres"]`) and why. Either way `backend` says where the queues live, so a probe's
   * reader knows why there is no `redis` entry on postgres.
   */
  @Get('ready')
  async ready() {
    const report = await this.dependencies.check();
    const backend = this.dependencies.backend;
    const missing = (Object.keys(report) as (keyof typeof report)[]).filter((name) => report[name] !== 'ok');
    if (missing.length > 0)
      throw new ProblemException('dependency-unavailable', `unavailable: ${missing.join(', ')}`, {
        missing,
        backend,
        ...report,
      });
    return { status: 'ok', backend, missing, ...report };
  }
}
