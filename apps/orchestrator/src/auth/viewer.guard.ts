import {
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { bearerKey } from './api-key.guard.ts';
import { type Team, TeamsService } from './teams.service.ts';

/** Who is looking at the fleet: an operator sees all of it, a team only its own share. */
export type Viewer = { kind: 'operator' } | { kind: 'team'; team: Team };

type ViewingRequest = Request & { viewer?: Viewer };

/** For the read-only fleet views: a team's API key or an operator key (`operators.apiKeys`). */
@Injectable()
export class ViewerGuard implements CanActivate {
  constructor(@Inject(TeamsService) private readonly teams: TeamsService) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ViewingRequest>();
    const key = bearerKey(request);
    if (this.teams.isOperatorKey(key)) {
      request.viewer = { kind: 'operator' };
      return true;
    }
    const team = this.teams.byApiKey(key);
    if (!team) throw new UnauthorizedException('unknown API key');
    request.viewer = { kind: 'team', team };
    return true;
  }
}

/** The viewer set by ViewerGuard. */
export const CurrentViewer = createParamDecorator((_data: unknown, context: ExecutionContext): Viewer => {
  const viewer = context.switchToHttp().getRequest<ViewingRequest>().viewer;
  if (!viewer) throw new UnauthorizedException('not authenticated');
  return viewer;
});
