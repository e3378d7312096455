import { type CallHandler, type ExecutionContext, type NestInterceptor, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { DependencyHealth } from '../runtime/dependency-health.ts';

const WITHOUT_TIMEOUT = 'switchyard:without-dependency-timeout';

/** For handlers that keep the response open on purpose (event streams) or bound their own waits. */
export const WithoutDependencyTimeout = () => SetMetadata(WITHOUT_TIMEOUT, true);

const pause = (ms: number) => new Promise<'slow'>((resolve) => setTimeout(() => resolve('slow'), ms).unref());

/**
 * A request stuck behind a dependency that stopped answering (a paused Redis holds ioredis commands
 * indefinitely; a PostgreSQL that is going away) is answered 503 with Retry-After within `timeoutMs`
 * instead of at the client's own timeout. A request that is merely slow (a busy machine) is not: after
 * half the time PostgreSQL and Redis (on the redis backend) are asked, within the other half, and only a dependency that does
 * not answer ends the request; while both answer, the request goes on and is asked about again.
 * A handler that is cut off may still finish later; writes are safe to retry (Idempotency-Key,
 * deterministic ids).
 */
export class DependencyTimeoutInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly dependencies: DependencyHealth,
    private readonly timeoutMs: number,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const exempt = this.reflector.getAllAndOverride<boolean>(WITHOUT_TIMEOUT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (exempt || context.getType() !== 'http') return next.handle();
    return from(this.guard(lastValueFrom(next.handle(), { defaultValue: undefined })));
  }

  private async guard<T>(work: Promise<T>): Promise<T> {
    // The request may be answered 503 before `work` settles; its later failure is nobody's to handle.
    work.catch(() => undefined);
    const done = work.then(() => 'done' as const);
    const half = Math.max(1, Math.floor(this.timeoutMs / 2));
    while ((await Promise.race([done, pause(half)])) === 'slow') {
      await this.dependencies.requireAll({ fresh: true, timeoutMs: half });
    }
    return work;
  }
}
