import {
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  ServiceUnavailableException,
  SetMetadata,
} from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { type Observable, throwError, timeout } from 'rxjs';

const WITHOUT_TIMEOUT = 'switchyard:without-dependency-timeout';

/** For handlers that keep the response open on purpose (event streams) or bound their own waits. */
export const WithoutDependencyTimeout = () => SetMetadata(WITHOUT_TIMEOUT, true);

/**
 * The last line of defence against a dependency that stops answering mid-request (a paused Redis
 * holds ioredis commands indefinitely): past `timeoutMs` the client gets a 503 with Retry-After
 * instead of waiting for its own timeout. The handler may still finish later; writes are idempotent
 * by design (Idempotency-Key, deterministic ids), so a retry is safe.
 */
export class DependencyTimeoutInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly timeoutMs: number,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const exempt = this.reflector.getAllAndOverride<boolean>(WITHOUT_TIMEOUT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (exempt || context.getType() !== 'http') return next.handle();
    return next.handle().pipe(
      timeout({
        first: this.timeoutMs,
        with: () =>
          throwError(
            () =>
              new ServiceUnavailableException(
                `PostgreSQL or Redis did not answer within ${this.timeoutMs} ms; try again later`,
              ),
          ),
      }),
    );
  }
}
