import {
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { refuseNonTeamKey } from './key-refusal.ts';
import { type Team, TeamsService } from './teams.service.ts';

type AuthenticatedRequest = Request & { team?: Team };

/** The key of `Authorization: Bearer <key>`; a 401 when there is none. */
export function bearerKey(request: Request): string {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  if (!match?.[1]) throw new UnauthorizedException('missing "Authorization: Bearer <api key>" header');
  return match[1];
}

/**
 * A team's bearer API key, for the /v1 routes that act for a team: a missing or unknown key is 401,
 * never a hint which; an operator key is a 403 (operators only read: ViewerGuard).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(TeamsService) private readonly teams: TeamsService) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearerKey(request);
    const team = this.teams.byApiKey(key);
    if (!team) refuseNonTeamKey(this.teams, key);
    request.team = team;
    return true;
  }
}

/** The team the request's API key belongs to (set by ApiKeyGuard). */
export const CurrentTeam = createParamDecorator((_data: unknown, context: ExecutionContext): Team => {
  const team = context.switchToHttp().getRequest<AuthenticatedRequest>().team;
  if (!team) throw new UnauthorizedException('not authenticated');
  return team;
});
