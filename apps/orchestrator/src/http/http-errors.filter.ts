import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Response } from 'express';
import { isDependencyOutage } from '../runtime/dependency-errors.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';

/** Errors of express's body parser: `type` says which (entity.parse.failed, entity.too.large, ...). */
interface BodyParserError {
  type?: string;
  message: string;
}

/** Answers that mean "not now": the client is told when to come back. */
const RETRYABLE = new Set([429, 503]);

/**
 * Every error becomes JSON with a reason. Client mistakes caught below Nest (malformed JSON, oversized
 * bodies, unsupported charsets) keep their 4xx with a plain explanation; PostgreSQL or Redis being
 * unreachable is a 503; anything else that is not an HttpException is a server fault: a 500 without
 * internals, logged with its stack. Every 429 and 503 carries Retry-After.
 */
@Catch()
export class HttpErrorsFilter implements ExceptionFilter {
  constructor(
    @Inject(LOGGER) private readonly log: Logger,
    private readonly retryAfterSeconds = 5,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    const status = exception instanceof HttpException ? exception.getStatus() : undefined;
    if ((status && RETRYABLE.has(status)) || (!status && isDependencyOutage(exception)))
      response.setHeader('Retry-After', String(this.retryAfterSeconds));
    // Nest wraps body-parser errors in an HttpException; the parser's own error says what was wrong.
    const parserFailure =
      exception instanceof HttpException ? (exception.cause as BodyParserError | undefined) : undefined;
    if (parserFailure?.type) {
      this.reject(response, exception as HttpException, parserFailure);
      return;
    }
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      response
        .status(exception.getStatus())
        .json(typeof body === 'string' ? { statusCode: exception.getStatus(), message: body } : body);
      return;
    }
    if (isDependencyOutage(exception)) {
      this.log.warn({ err: exception }, 'request failed: a dependency is unavailable');
      response.status(503).json({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'PostgreSQL or Redis is unavailable; try again later',
      });
      return;
    }
    this.log.error({ err: exception }, 'unhandled error');
    response.status(500).json({ statusCode: 500, message: 'internal error' });
  }

  private reject(response: Response, exception: HttpException, failure: BodyParserError): void {
    const status = exception.getStatus();
    const message =
      failure.type === 'entity.parse.failed'
        ? `request body is not valid JSON: ${failure.message}`
        : failure.type === 'entity.too.large'
          ? 'request body is larger than orchestrator.maxRequestBytes'
          : failure.message;
    response.status(status).json({ statusCode: status, error: failure.type, message });
  }
}
