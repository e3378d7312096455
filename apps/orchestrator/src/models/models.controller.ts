import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { modelChoices } from './model-choices.ts';
import type { ModelChoices } from './model-choices-schema.ts';
import { TeamModelsRegistry } from './team-models-registry.ts';

/** The models a team's jobs may use; a team's key only (operators submit no jobs). */
@UseGuards(ApiKeyGuard)
@Controller('v1/models')
export class ModelsController {
  constructor(@Inject(TeamModelsRegistry) private readonly registry: TeamModelsRegistry) {}

  @Get()
  list(@CurrentTeam() team: Team): ModelChoices {
    return modelChoices(team.name, this.registry.forTeam(team.name));
  }
}
