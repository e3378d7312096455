import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isDependencyOutage } from '../runtime/dependency-errors.ts';
import type { Logger } from '../runtime/logger.ts';
import { LOGGER } from '../runtime/tokens.ts';
import { JSON_RPC_CODES, jsonRpcError } from './json-rpc.ts';
import {
  kindForStatus,
  PROBLEM_CONTENT_TYPE,
  PROBLEM_KINDS,
  type Problem,
  ProblemException,
  type ProblemKind,
  problemType,
} from './problem.ts';

/** Errors of express's body parser: `type` says which (entity.parse.failed, entity.too.large, ...). */
interface BodyParserError {
  type?: string;
  message: string;
}

/** Answers that mean "not now": the client is told when to come back. */
const RETRYABLE = new Set([429, 503]);

/** Members of a Nest exception's object body that the problem already says in its own words. */
const NEST_MEMBERS = new Set([
  'statusCode',
  'message',
  'error',
  'status',
  'type',
  'title',
  'detail',
  'instance',
]);

interface ProblemParts {
  kind: ProblemKind;
  status: number;
  detail: string;
  extensions?: Record<string, unknown>;
}

/**
 * Every error becomes RFC 9457 `application/problem+json` with a stable `type` per kind (problem.ts).
 * Client mistakes caught below Nest (malformed JSON, oversized bodies, unsupported charsets) keep their
 * 4xx with a plain explanation; PostgreSQL or Redis being unreachable is a 503; anything else that is
 * not an HttpException is a server fault: a 500 without internals, logged with its stack. Every 429 and
 * 503 carries Retry-After. On /mcp the same status carries a JSON-RPC error object instead.
 */
@Catch()
export class HttpErrorsFilter implements ExceptionFilter {
  constructor(
    @Inject(LOGGER) private readonly log: Logger,
    private readonly retryAfterSeconds = 5,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    if (response.headersSent) return;
    const parts = this.parts(exception);
    if (RETRYABLE.has(parts.status) && !response.getHeader('Retry-After'))
      response.setHeader('Retry-After', String(this.retryAfterSeconds));
    const request = http.getRequest<Request>();
    const path = (request.originalUrl ?? request.url ?? '').split('?')[0] ?? '';
    if (path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)) {
      // An MCP client reads JSON-RPC, not problem details: same status, the error in its own terms.
      response.status(parts.status).json(jsonRpcError(null, jsonRpcCode(parts.kind), parts.detail));
      return;
    }
    const problem: Problem = {
      ...parts.extensions,
      type: problemType(parts.kind),
      title: PROBLEM_KINDS[parts.kind].title,
      status: parts.status,
      detail: parts.detail,
      instance: path,
    };
    response.status(parts.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  private parts(exception: unknown): ProblemParts {
    if (exception instanceof ProblemException)
      return {
        kind: exception.kind,
        status: exception.getStatus(),
        detail: exception.detail,
        extensions: exception.extensions,
      };
    if (exception instanceof HttpException) {
      // Nest wraps body-parser errors in an HttpException; the parser's own error says what was wrong.
      const parserFailure = exception.cause as BodyParserError | undefined;
      if (parserFailure?.type) return bodyParserProblem(exception.getStatus(), parserFailure);
      return nestProblem(exception);
    }
    if (isDependencyOutage(exception)) {
      this.log.warn({ err: exception }, 'request failed: a dependency is unavailable');
      return {
        kind: 'dependency-unavailable',
        status: 503,
        detail: 'PostgreSQL or Redis is unavailable; try again later',
      };
    }
    this.log.error({ err: exception }, 'unhandled error');
    return { kind: 'internal-error', status: 500, detail: 'internal error' };
  }
}

/** The gateway's path (gateway/mcp-gateway.controller.ts): its errors are JSON-RPC error objects. */
const MCP_PATH = '/mcp';

function jsonRpcCode(kind: ProblemKind): number {
  if (kind === 'malformed-body') return JSON_RPC_CODES.parseError;
  if (kind === 'internal-error' || kind === 'dependency-unavailable') return JSON_RPC_CODES.internalError;
  return JSON_RPC_CODES.invalidRequest;
}

function bodyParserProblem(status: number, failure: BodyParserError): ProblemParts {
  if (failure.type === 'entity.parse.failed')
    return { kind: 'malformed-body', status, detail: `request body is not valid JSON: ${failure.message}` };
  if (failure.type === 'entity.too.large')
    return {
      kind: 'payload-too-large',
      status,
      detail: 'request body is larger than orchestrator.maxRequestBytes',
    };
  return { kind: kindForStatus(status), status, detail: `${failure.type}: ${failure.message}` };
}

/** An exception thrown the Nest way (`new NotFoundException('no job x')`, or with an object body). */
function nestProblem(exception: HttpException): ProblemParts {
  const status = exception.getStatus();
  const body = exception.getResponse();
  if (typeof body === 'string') return { kind: kindForStatus(status), status, detail: body };
  const fields = body as Record<string, unknown>;
  const message = Array.isArray(fields.message) ? fields.message.join('; ') : fields.message;
  const extensions = Object.fromEntries(Object.entries(fields).filter(([key]) => !NEST_MEMBERS.has(key)));
  return {
    kind: kindForStatus(status),
    status,
    detail: typeof message === 'string' ? message : exception.message,
    extensions,
  };
}
