import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ProblemException } from './problem.ts';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A request that carries a body must say it is JSON; anything else is a 415 naming what it sent,
 * instead of the parser skipping it and validation complaining that the body is missing.
 */
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<Request>();
    if (!WITH_BODY.has(request.method) || !hasBody(request)) return true;
    if (request.is(['application/json', '+json'])) return true;
    const sent = request.headers['content-type'];
    throw new ProblemException(
      'unsupported-media-type',
      sent
        ? `Content-Type ${sent} is not supported; send application/json`
        : 'the request has a body but no Content-Type; send Content-Type: application/json',
    );
  }
}

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
