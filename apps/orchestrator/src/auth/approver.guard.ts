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
import { refuseNonTeamKey } from './key-refusal.ts';
import { type KeyIdentity, TeamsService } from './teams.service.ts';

type IdentifiedRequest = Request & { team?: KeyIdentity['team']; keyIdentity?: KeyIdentity };

/**
 * Who may answer for a team: its API keys, or — for approvals of a team that configures
 * `approverKeys` — only those. The key's identity (never the key) goes into the audit trail.
 */
function guard(approval: boolean) {
  @Injectable()
  class KeyIdentityGuard implements CanActivate {
    constructor(@Inject(TeamsService) readonly teams: TeamsService) {}

    canActivate(context: ExecutionContext): boolean {
      const request = context.switchToHttp().getRequest<IdentifiedRequest>();
      const key = bearerKey(request);
      const identity = this.teams.identify(key);
      if (!identity) refuseNonTeamKey(this.teams, key);
      const approversOnly = approval && identity.team.config.approverKeys.length > 0;
      if (identity.approver ? !approval : approversOnly) {
        throw new UnauthorizedException(
          approval
            ? `team ${identity.team.name} takes approvals only from its approverKeys`
            : 'approver keys only decide approvals',
        );
      }
      request.team = identity.team;
      request.keyIdentity = identity;
      return true;
    }
  }
  return KeyIdentityGuard;
}

/** Answers to questions: the team's API keys. */
export const AnswerKeyGuard = guard(false);
/** Approval decisions: the team's approverKeys when it has any, else its API keys. */
export const ApproverKeyGuard = guard(true);

/** The audit label of the request's key (set by AnswerKeyGuard / ApproverKeyGuard). */
export const CurrentKeyLabel = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const identity = context.switchToHttp().getRequest<IdentifiedRequest>().keyIdentity;
  if (!identity) throw new UnauthorizedException('not authenticated');
  return identity.label;
});
