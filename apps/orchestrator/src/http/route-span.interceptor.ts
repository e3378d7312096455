import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { ATTR } from '@switchyard/telemetry';
import type { Request } from 'express';
import type { Observable } from 'rxjs';

/**
 * Names the HTTP server span after the matched route (`POST /v1/jobs`, `GET /v1/jobs/:id`), which the
 * HTTP instrumentation alone cannot know, so Jaeger groups requests by endpoint, not by method.
 */
export class RouteSpanInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const route = (request.route as { path?: string } | undefined)?.path;
    const span = trace.getActiveSpan();
    if (span && route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute(ATTR.HTTP_ROUTE, route);
    }
    return next.handle();
  }
}
