import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentTeam } from '../auth/api-key.guard.ts';
import type { Team } from '../auth/teams.service.ts';
import { ModelToolCatalog } from './model-tool-catalog.ts';

@ApiTags('catalog')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/tools')
export class CatalogController {
  constructor(@Inject(ModelToolCatalog) private readonly catalog: ModelToolCatalog) {}

  @Get()
  @ApiOkResponse({ description: "The tools this team's agents may call, with their availability" })
  async list(@CurrentTeam() team: Team) {
    const view = await this.catalog.view(team.config.tools);
    return {
      tools: view.tools.map((tool) => ({
        name: tool.name,
        server: tool.server,
        tool: tool.tool,
        description: tool.description,
        available: tool.availability === 'ready',
        availability: tool.availability,
        idempotent: tool.idempotent,
        inputSchema: tool.inputSchema,
        ...(tool.definition.annotations ? { annotations: tool.definition.annotations } : {}),
      })),
      errors: view.errors,
    };
  }
}
