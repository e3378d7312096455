import { UnauthorizedException } from '@nestjs/common';
import { ProblemException } from '../http/problem.ts';
import type { TeamsService } from './teams.service.ts';

/**
 * Why an operator key is refused where only a team may act. Operators read every team's jobs and the
 * fleet; a job belongs to a team, so only that team's keys submit, cancel, delete, answer or approve.
 */
export const OPERATOR_KEY_READ_ONLY =
  "operator keys are read-only (GET /v1/jobs, /v1/jobs/{id}, its events, /v1/tools, /v1/servers): submitting, cancelling, deleting, answering and approving take the team's own API key";

/**
 * The refusal of a key that is not a team's: a 403 naming why for an operator key, which is known but
 * may not act for a team; a 401 for anything else, never a hint which.
 */
export function refuseNonTeamKey(teams: TeamsService, key: string): never {
  if (teams.isOperatorKey(key)) throw new ProblemException('forbidden', OPERATOR_KEY_READ_ONLY);
  throw new UnauthorizedException('unknown API key');
}
